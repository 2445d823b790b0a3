import { LOOPBACK_OPENED } from "@stackvm/core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type EverythingServer, startEverything } from "../../../test/support/mcp-server";
import { SdkMcpClient } from "./mcp-client";

let server: EverythingServer;
beforeAll(async () => {
  server = await startEverything();
});
afterAll(() => server.stop());
afterEach(() => {
  vi.restoreAllMocks();
});

const connection = (policy: typeof LOOPBACK_OPENED) => ({
  server: "everything",
  url: server.url,
  headers: {},
  allowedHosts: ["127.0.0.1"],
  policy,
  timeoutMs: 20_000,
  maxResponseBytes: 1024 * 1024,
});

describe("SdkMcpClient and the guard", () => {
  it("sends every request of a call (initialize, list, session end) through the guard, never the SDK's own fetch", async () => {
    // The SDK falls back to the global fetch, which no guard checks, wherever it
    // is not handed ours: none of its requests may take that way.
    const unguarded = vi.spyOn(globalThis, "fetch");
    server.headers.length = 0;
    const tools = await new SdkMcpClient().listTools(connection(LOOPBACK_OPENED));
    expect(tools.length).toBeGreaterThan(0);
    expect(server.headers.length).toBeGreaterThan(1);
    expect(unguarded).not.toHaveBeenCalled();
  });

  it("sends no byte to the server when its port is one of the stack's own", async () => {
    server.headers.length = 0;
    const port = Number(new URL(server.url).port);
    const own = { ...LOOPBACK_OPENED, ownPorts: new Set([port]) };
    await expect(new SdkMcpClient().listTools(connection(own))).rejects.toMatchObject({
      code: "address_forbidden",
    });
    expect(server.headers).toHaveLength(0);
  });
});

/**
 * `npm run eval -- --url` and the operator's key: the local stack's key file is
 * never sent to another host, a URL cannot smuggle credentials, and a redirect
 * from the "stack" stops the client before the key reaches anywhere else.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "./api";
import { evalApiKey } from "./api-key";

let folder: string;
let keyFile: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "svm-eval-key-"));
  keyFile = join(folder, "api-key");
  await writeFile(keyFile, "svm_local_secret-of-this-machine\n");
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("the eval's API key", () => {
  it.each(["http://localhost:3000", "http://127.0.0.1:3000/", "http://[::1]:3000"])(
    "reads the local stack's key file for a stack on this machine (%s)",
    async (url) => {
      expect(await evalApiKey(url, undefined, {}, keyFile)).toBe(
        "svm_local_secret-of-this-machine",
      );
    },
  );

  it.each([
    "https://stack.example.com",
    "http://localhost.attacker.example:3000",
    "http://10.0.0.5:3000",
    "http://2130706433.example/",
  ])("never sends the local key file to %s: it asks for a key for that host", async (url) => {
    await expect(evalApiKey(url, undefined, {}, keyFile)).rejects.toThrow(
      /sent only to a stack on this machine; pass --api-key or set STACKVM_API_KEY/,
    );
  });

  it("uses the key given for that URL, by flag first, then by environment", async () => {
    const url = "https://stack.example.com";
    expect(await evalApiKey(url, "svm_flag", { STACKVM_API_KEY: "svm_env" }, keyFile)).toBe(
      "svm_flag",
    );
    expect(await evalApiKey(url, undefined, { STACKVM_API_KEY: " svm_env\n" }, keyFile)).toBe(
      "svm_env",
    );
  });

  it.each([
    ["credentials in the URL", "http://user:pass@localhost:3000", /user name or password/],
    ["a file URL", "file:///etc/passwd", /not an http\(s\) URL/],
    ["no URL at all", "//no scheme", /not a URL/],
  ])("refuses %s", async (_what, url, says) => {
    await expect(evalApiKey(url, undefined, {}, keyFile)).rejects.toThrow(says);
  });
});

describe("the eval's client and redirects", () => {
  const seen: Array<{ server: string; authorization: string | undefined }> = [];
  let elsewhere: Server;
  let bouncer: Server;
  const listen = async (server: Server) => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return (server.address() as AddressInfo).port;
  };
  const record = (server: string, req: IncomingMessage) =>
    seen.push({ server, authorization: req.headers.authorization });
  let bouncerUrl: string;
  beforeAll(async () => {
    elsewhere = createServer((req, res) => {
      record("elsewhere", req);
      res.end("{}");
    });
    const elsewherePort = await listen(elsewhere);
    bouncer = createServer((req, res) => {
      record("bouncer", req);
      const to = req.url?.includes("same")
        ? "/v1/other"
        : `http://localhost:${elsewherePort}/steal`;
      res.writeHead(307, { location: to });
      res.end();
    });
    bouncerUrl = `http://127.0.0.1:${await listen(bouncer)}`;
  });
  afterAll(async () => {
    await new Promise((r) => elsewhere.close(r));
    await new Promise((r) => bouncer.close(r));
  });

  it("stops at a redirect, to another origin or its own, and sends the key nowhere else", async () => {
    const client = new ApiClient(bouncerUrl, "svm_local_secret-of-this-machine");
    await expect(client.call("GET", "/v1/tasks")).rejects.toThrow();
    await expect(client.call("POST", "/v1/same", { a: 1 })).rejects.toThrow();
    expect(seen.filter((s) => s.server === "elsewhere")).toEqual([]);
    expect(seen.filter((s) => s.server === "bouncer")).toHaveLength(2);
  });
});

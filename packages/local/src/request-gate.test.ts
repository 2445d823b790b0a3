import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { gateRequests } from "./request-gate";

describe("gateRequests", () => {
  const servers: ReturnType<typeof createServer>[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  /** A server whose answers wait until the test releases them. */
  async function slowServer() {
    const waiting: ServerResponse[] = [];
    let arrived: () => void = () => {};
    const server = createServer((_req, res) => {
      waiting.push(res);
      arrived();
    });
    const gate = gateRequests(server);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const nextArrival = () => new Promise<void>((resolve) => (arrived = resolve));
    return { gate, url, waiting, nextArrival };
  }

  it("lets requests in flight answer before close resolves, and refuses new ones with 503", async () => {
    const { gate, url, waiting, nextArrival } = await slowServer();
    const arrival = nextArrival();
    const first = fetch(url, { method: "POST", body: "{}" });
    await arrival;
    expect(gate.inFlight).toBe(1);

    let closed = false;
    const closing = gate.close(60_000).then(() => (closed = true));
    const refused = await fetch(url, { method: "POST", body: "{}" });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ message: "The local stack is stopping." });
    // The refused request never reached the server's handler.
    expect(waiting).toHaveLength(1);
    expect(closed).toBe(false);

    waiting[0]!.end("done");
    expect(await (await first).text()).toBe("done");
    await closing;
    expect(gate.inFlight).toBe(0);
  });

  it("counts a request whose client went away as done once the handler ends it", async () => {
    const { gate, url, waiting, nextArrival } = await slowServer();
    const abort = new AbortController();
    const arrival = nextArrival();
    const request = fetch(url, { signal: abort.signal }).catch((error: unknown) => error);
    await arrival;
    abort.abort();
    await request;
    const closing = gate.close(60_000);
    expect(gate.inFlight).toBe(1);
    waiting[0]!.end();
    await closing;
    expect(gate.inFlight).toBe(0);
  });

  it("resolves close after its wait when a request never answers", async () => {
    const { gate, url, nextArrival } = await slowServer();
    const arrival = nextArrival();
    void fetch(url).catch(() => undefined);
    await arrival;
    await gate.close(10);
    expect(gate.inFlight).toBe(1);
  });
});

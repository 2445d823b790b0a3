import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { startTestServer, type TestServer, trapOutsideConnections } from "../testing/net";
import { guardedFetch } from "./guarded-fetch";
import { LOOPBACK_OPENED } from "./outbound-policy";

let first: TestServer;
let second: TestServer;
beforeAll(async () => {
  [first, second] = await Promise.all([startTestServer(), startTestServer()]);
});
afterAll(() => Promise.all([first.close(), second.close()]));
beforeEach(() => {
  trapOutsideConnections();
  first.requests.length = 0;
  second.requests.length = 0;
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** The operator opened loopback (STACKVM_OPEN_PRIVATE_RANGES=127.0.0.0/8,::1). */
const loopbackOk = { policy: LOOPBACK_OPENED };

describe("guardedFetch", () => {
  it("drops credentials when a redirect leaves the origin, keeps the rest", async () => {
    const to = encodeURIComponent(`${second.origin}/echo`);
    await guardedFetch(
      {
        url: `${first.origin}/redirect?to=${to}&status=307`,
        headers: { authorization: "Bearer secret", cookie: "a=1", "idempotency-key": "k1" },
      },
      loopbackOk,
    );
    expect(first.requests[0]?.headers.authorization).toBe("Bearer secret");
    const arrived = second.requests[0]?.headers;
    expect(arrived?.authorization).toBeUndefined();
    expect(arrived?.cookie).toBeUndefined();
    expect(arrived?.["idempotency-key"]).toBe("k1");
  });

  it("keeps method and body on a 307 and turns a 303 into a GET without body", async () => {
    const post = { method: "POST", body: "payload", headers: { "content-type": "text/plain" } };
    await guardedFetch(
      { url: `${first.origin}/redirect?to=/echo&status=307`, ...post },
      loopbackOk,
    );
    await guardedFetch(
      { url: `${first.origin}/redirect?to=/echo&status=303`, ...post },
      loopbackOk,
    );
    const echoes = first.requests.filter((r) => r.url === "/echo");
    expect(echoes.map((r) => [r.method, r.body])).toEqual([
      ["POST", "payload"],
      ["GET", ""],
    ]);
    expect(echoes[1]?.headers["content-type"]).toBeUndefined();
  });

  it("refuses a redirect to a scheme other than http and https", async () => {
    const to = encodeURIComponent("file:///etc/passwd");
    await expect(
      guardedFetch({ url: `${first.origin}/redirect?to=${to}` }, loopbackOk),
    ).rejects.toMatchObject({ code: "invalid_url" });
  });

  it("re-checks the allow-list on every hop", async () => {
    const to = encodeURIComponent(`http://localhost:${second.port}/echo`);
    await expect(
      guardedFetch(
        { url: `${first.origin}/redirect?to=${to}` },
        { ...loopbackOk, allowedHosts: ["127.0.0.1"] },
      ),
    ).rejects.toMatchObject({ code: "host_not_allowed" });
    expect(second.requests).toHaveLength(0);
  });

  it("refuses a redirect to one of the stack's own ports, with loopback opened", async () => {
    const to = encodeURIComponent(`${second.origin}/echo`);
    const ownSecond = {
      policy: { ...LOOPBACK_OPENED, ownPorts: new Set([second.port]) },
    };
    await expect(
      guardedFetch({ url: `${first.origin}/redirect?to=${to}` }, ownSecond),
    ).rejects.toMatchObject({ code: "address_forbidden", details: { port: second.port } });
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(0);
  });

  it("refuses an own port reached by name through lookup (localhost)", async () => {
    const own = { policy: { ...LOOPBACK_OPENED, ownPorts: new Set([first.port]) } };
    await expect(
      guardedFetch({ url: `http://localhost:${first.port}/echo` }, own),
    ).rejects.toMatchObject({ code: "address_forbidden" });
    expect(first.requests).toHaveLength(0);
  });

  it.each([
    [
      "userinfo naming an allowed host",
      (port: number) => `http://example.com@127.0.0.1:${port}/echo`,
    ],
    ["percent-encoded host", (port: number) => `http://%31%32%37.0.0.1:${port}/echo`],
    ["short form", (port: number) => `http://127.1:${port}/echo`],
    ["hex form", (port: number) => `http://0x7f000001:${port}/echo`],
    ["trailing dot", (port: number) => `http://127.0.0.1.:${port}/echo`],
    ["IPv4-mapped IPv6", (port: number) => `http://[::ffff:127.0.0.1]:${port}/echo`],
    ["IPv4-compatible IPv6", (port: number) => `http://[::127.0.0.1]:${port}/echo`],
    ["NAT64", (port: number) => `http://[64:ff9b::127.0.0.1]:${port}/echo`],
  ])("refuses loopback by a spelling trick (%s) before any byte is sent", async (_, url) => {
    const allowedHosts = ["example.com", "127.0.0.1", "::ffff:127.0.0.1", "::7f00:1"];
    await expect(guardedFetch({ url: url(first.port) }, { allowedHosts })).rejects.toMatchObject({
      code: "address_forbidden",
    });
    expect(first.requests).toHaveLength(0);
  });

  it("refuses a name that resolves to loopback in either family, when both are handed over", async () => {
    const resolve = async () => [
      { address: "::1", family: 6 },
      { address: "127.0.0.1", family: 4 },
    ];
    await expect(
      guardedFetch({ url: `http://twofaced.example:${first.port}/echo` }, { resolve }),
    ).rejects.toMatchObject({ code: "address_forbidden" });
    expect(first.requests).toHaveLength(0);
  });

  it("never allows loopback by default", async () => {
    await expect(guardedFetch({ url: `${first.origin}/echo` })).rejects.toMatchObject({
      code: "address_forbidden",
    });
    expect(first.requests).toHaveLength(0);
  });
});

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { guardedFetch } from "./guarded-fetch";
import { startTestServer, type TestServer, trapOutsideConnections } from "./test-support";

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

const loopbackOk = { allowLoopback: true };

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

  it("decides loopback per hop when given a function", async () => {
    const to = encodeURIComponent(`${second.origin}/echo`);
    const onlyFirst = { allowLoopback: (url: URL) => url.port === String(first.port) };
    await expect(
      guardedFetch({ url: `${first.origin}/redirect?to=${to}` }, onlyFirst),
    ).rejects.toMatchObject({ code: "address_forbidden" });
    expect(second.requests).toHaveLength(0);
  });

  it("never allows loopback by default", async () => {
    await expect(guardedFetch({ url: `${first.origin}/echo` })).rejects.toMatchObject({
      code: "address_forbidden",
    });
    expect(first.requests).toHaveLength(0);
  });
});

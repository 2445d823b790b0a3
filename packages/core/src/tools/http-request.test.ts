import type { LookupAddress } from "node:dns";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { LOOPBACK_OPENED } from "../net/outbound-policy";
import { startTestServer, type TestServer, trapOutsideConnections } from "../testing/net";
import { testToolContext } from "../testing/tool-context";
import { createHttpRequestTool, HttpRequestInput } from "./http-request";

/** Names the tests use, and what they "resolve" to; nothing reaches a real resolver. */
const DNS: Record<string, string[]> = {
  localhost: ["127.0.0.1"],
  "loopback.example.com": ["127.0.0.1"],
  "internal.example.com": ["10.0.0.1"],
  "rebind.example.com": ["127.0.0.1", "10.0.0.1"],
};
const resolved: string[] = [];
const resolve = async (hostname: string): Promise<LookupAddress[]> => {
  resolved.push(hostname);
  const addresses = DNS[hostname];
  if (!addresses) throw new Error(`test resolver: unknown host ${hostname}`);
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

const tool = createHttpRequestTool({ resolve, timeoutMs: 2_000, maxResponseBytes: 1024 * 1024 });

let server: TestServer;
let trap: { attempts: string[] };
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
beforeEach(() => {
  trap = trapOutsideConnections();
  resolved.length = 0;
  server.requests.length = 0;
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** Loopback opened by the operator and the test server's host listed: both are needed. */
const local = (hosts: string[] = []) =>
  testToolContext({
    outbound: LOOPBACK_OPENED,
    namespace: { allowed_hosts: ["127.0.0.1", ...hosts] },
  });

function call(input: unknown, context = local()) {
  return tool.run(HttpRequestInput().parse(input), context);
}

describe("http_request", () => {
  it("returns status, lower-case headers and the parsed JSON body", async () => {
    const { value } = await call({ url: `${server.origin}/echo` });
    expect(value).toMatchObject({
      status: 200,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: { method: "GET" },
    });
  });

  it("sends the step's idempotency key and its user agent", async () => {
    const { value } = await call({
      url: `${server.origin}/echo`,
      method: "POST",
      headers: { "X-Trace": "abc" },
      body: { a: 1 },
    });
    const { headers, body } = (value as { body: { headers: Record<string, string>; body: string } })
      .body;
    expect(headers).toMatchObject({
      "idempotency-key": "idem-task1-main-c0",
      "user-agent": "stackvm/1",
      "x-trace": "abc",
      "content-type": "application/json",
    });
    expect(JSON.parse(body)).toEqual({ a: 1 });
  });

  it("connects through the guarded lookup to a loopback name listed by itself in local mode", async () => {
    const { value } = await call(
      { url: `http://localhost:${server.port}/echo` },
      local(["localhost"]),
    );
    expect(value).toMatchObject({
      status: 200,
      body: { headers: { host: `localhost:${server.port}` } },
    });
    expect(resolved).toEqual(["localhost"]);
  });

  it("returns an error status as an answer", async () => {
    const { value } = await call({ url: `${server.origin}/status` });
    expect(value).toMatchObject({ status: 404, body: { error: "no such thing" } });
  });

  it("returns a text body as text", async () => {
    const { value } = await call({ url: `${server.origin}/text` });
    expect(value).toMatchObject({ body: "plain words" });
  });

  it.each([
    ["http://127.0.0.1/", ["127.0.0.1"]],
    ["http://[::1]/", ["::1"]],
    ["http://10.0.0.1/", ["10.0.0.1"]],
    ["http://169.254.169.254/latest/meta-data/", ["169.254.169.254"]],
    ["http://2130706433/", ["127.0.0.1"]],
    ["http://0x7f.1/", ["127.0.0.1"]],
    ["http://0177.0.0.1/", ["127.0.0.1"]],
    ["http://[::ffff:169.254.169.254]/", ["::ffff:169.254.169.254"]],
    ["http://100.64.0.1/", []],
  ])("refuses %s before connecting, even when allowed_hosts lists it", async (url, hosts) => {
    const context = testToolContext({ namespace: { allowed_hosts: hosts } });
    await expect(call({ url }, context)).rejects.toMatchObject({ code: "address_forbidden" });
    expect(trap.attempts).toEqual([]);
  });

  it("refuses a name that resolves to a loopback address", async () => {
    const context = testToolContext({ namespace: { allowed_hosts: ["loopback.example.com"] } });
    await expect(call({ url: "http://loopback.example.com/" }, context)).rejects.toMatchObject({
      code: "address_forbidden",
    });
    expect(resolved).toEqual(["loopback.example.com"]);
  });

  it("refuses a listed name resolving to loopback unless the operator opened loopback", async () => {
    const listed = ["127.0.0.1", "loopback.example.com"];
    const closed = testToolContext({ namespace: { allowed_hosts: listed } });
    await expect(
      call({ url: `http://loopback.example.com:${server.port}/echo` }, closed),
    ).rejects.toMatchObject({ code: "address_forbidden" });
    const ownPort = testToolContext({
      outbound: { ...LOOPBACK_OPENED, ownPorts: new Set([server.port]) },
      namespace: { allowed_hosts: listed },
    });
    await expect(
      call({ url: `http://loopback.example.com:${server.port}/echo` }, ownPort),
    ).rejects.toMatchObject({ code: "address_forbidden", details: { port: server.port } });
    expect(server.requests).toHaveLength(0);
  });

  it("refuses a name when one of its addresses is private (DNS rebinding)", async () => {
    await expect(
      call({ url: `http://rebind.example.com:${server.port}/echo` }, local(["rebind.example.com"])),
    ).rejects.toMatchObject({ code: "address_forbidden" });
  });

  it("refuses loopback outside local mode even when the namespace lists it", async () => {
    const context = testToolContext({ namespace: { allowed_hosts: ["127.0.0.1"] } });
    await expect(call({ url: `${server.origin}/echo` }, context)).rejects.toMatchObject({
      code: "address_forbidden",
    });
    expect(server.requests).toHaveLength(0);
  });

  it("refuses a host that is not in allowed_hosts, saying how to allow it", async () => {
    const context = testToolContext({ namespace: { allowed_hosts: ["*.example.org"] } });
    const error = await call({ url: "https://api.example.com/x" }, context).catch((e) => e);
    expect(error).toMatchObject({ code: "host_not_allowed" });
    expect(error.message).toContain("add 'api.example.com'");
    expect(resolved).toEqual([]);
  });

  it.each([
    ["a private address", "http://10.0.0.1/", []],
    ["the metadata service", "http://169.254.169.254/latest/meta-data/", ["169.254.169.254"]],
    ["a name that resolves privately", "http://internal.example.com/", ["internal.example.com"]],
  ])("refuses a redirect to %s before connecting", async (_what, to, hosts) => {
    const url = `${server.origin}/redirect?to=${encodeURIComponent(to)}`;
    await expect(call({ url }, local(hosts))).rejects.toMatchObject({ code: "address_forbidden" });
    expect(server.requests).toHaveLength(1);
    expect(trap.attempts.filter((host) => host !== "127.0.0.1")).toEqual(
      hosts.includes("internal.example.com") ? ["internal.example.com"] : [],
    );
  });

  it("refuses a redirect to a host that is not allowed", async () => {
    const url = `${server.origin}/redirect?to=${encodeURIComponent("https://evil.example.net/")}`;
    await expect(call({ url })).rejects.toMatchObject({ code: "host_not_allowed" });
  });

  it("follows allowed redirects and stops after five", async () => {
    const redirected = await call({ url: `${server.origin}/redirect?to=/echo` });
    expect(redirected.details).toMatchObject({ redirects: 1, url: `${server.origin}/echo` });
    await expect(call({ url: `${server.origin}/loop` })).rejects.toMatchObject({
      code: "too_many_redirects",
    });
    expect(server.requests.filter((r) => r.url === "/loop")).toHaveLength(6);
  });

  it("fails a response over the size cap while it streams", async () => {
    const error = await call({ url: `${server.origin}/big` }).catch((e) => e);
    expect(error).toMatchObject({ code: "response_too_large" });
    expect(error.message).toContain("1048576 bytes");
  });

  it("fails a response that declares a size over the cap", async () => {
    await expect(call({ url: `${server.origin}/big-declared` })).rejects.toMatchObject({
      code: "response_too_large",
    });
  });

  it("times out on a server that never answers", async () => {
    const quick = createHttpRequestTool({ resolve, timeoutMs: 100 });
    const input = HttpRequestInput().parse({ url: `${server.origin}/hang` });
    await expect(quick.run(input, local())).rejects.toMatchObject({ code: "http_timeout" });
  });

  it("fails a refused connection with http_error", async () => {
    const closed = await startTestServer();
    await closed.close();
    await expect(call({ url: `${closed.origin}/echo` })).rejects.toMatchObject({
      code: "http_error",
    });
  });
});

describe("HttpRequestInput", () => {
  it.each([
    [{ url: "ftp://example.com/file" }, "http://"],
    [{ url: "not a url" }, "http://"],
    [{ url: "https://example.com", method: "TRACE" }, "method"],
    [{ url: "https://example.com", headers: { Host: "other.example.com" } }, "set by the tool"],
    [{ url: "https://example.com", headers: { "Idempotency-Key": "mine" } }, "set by the tool"],
    [{ url: "https://example.com", headers: { "X-A": "a\r\nX-B: b" } }, "one line"],
    [{ url: "https://example.com", extra: 1 }, "extra"],
  ])("refuses %j with a clear message", (input, words) => {
    const result = HttpRequestInput().safeParse(input);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain(words);
  });
});

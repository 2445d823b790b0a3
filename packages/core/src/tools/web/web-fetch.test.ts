import type { LookupAddress } from "node:dns";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, isIP } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { LOOPBACK_LITERALS, PUBLIC_ADDRESS } from "../../../../../test/support/hostile-addresses";
import { CLOSED_POLICY, LOOPBACK_OPENED, type OutboundPolicy } from "../../net/outbound-policy";
import { trapOutsideConnections } from "../../testing/net";
import { testToolContext } from "../../testing/tool-context";
import { createWebFetchTool, WebFetchInput } from "./web-fetch";

const ARTICLE = `<!doctype html><html><head><title>Kyoto's temples | Travel site</title>
<style>body { color: red }</style><script>window.tracking = "SCRIPT-TEXT";</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About us</a> MENU-TEXT</nav>
<article><h1>Kyoto's temples</h1>
${"<p>Kyoto has more than a thousand temples, and Kinkaku-ji, the golden pavilion, is the most visited of them all in every season of the year.</p>".repeat(6)}
<p>Read <a href="/guides/ryoan-ji">the guide to Ryoan-ji</a> before you go.</p>
<ul><li>Kinkaku-ji</li><li>Ginkaku-ji</li></ul></article>
<footer>FOOTER-TEXT &copy; 2026</footer></body></html>`;

const para = `<p>${"Words that a reader would read, over and over again. ".repeat(20)}</p>\n`;

/** The page server: each path is one kind of page, or of hostile page. */
const ROUTES: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  "/article": (_req, res) => html(res, ARTICLE),
  "/list": (_req, res) => html(res, "<html><body><ul><li>one</li><li>two</li></ul></body></html>"),
  // 5 MB of HTML, in chunks, without content-length.
  "/huge": (_req, res) => streamHtml(res, 5_000_000),
  // 5 MB declared up front.
  "/huge-declared": (_req, res) => streamHtml(res, 5_000_000, true),
  "/plain": (_req, res) => send(res, "text/plain; charset=utf-8", "# not a heading\nplain words"),
  "/json": (_req, res) => send(res, "application/json", '{"a":1}'),
  "/latin1": (_req, res) =>
    send(res, "text/plain; charset=iso-8859-1", Buffer.from([0x63, 0x61, 0x66, 0xe9])),
  "/pdf": (_req, res) => send(res, "application/pdf", "%PDF-1.7 ..."),
  "/png": (_req, res) => send(res, "image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47])),
  "/octet": (_req, res) => send(res, "application/octet-stream", "MZ\u0000\u0000"),
  "/missing": (_req, res) => send(res, "text/html", "<h1>Not found</h1>", 404),
  "/loop": (_req, res) => res.writeHead(302, { location: "/loop" }).end(),
  "/redirect": (req, res) => {
    const to = new URL(req.url ?? "", "http://x").searchParams.get("to") ?? "/article";
    res.writeHead(302, { location: to }).end();
  },
  // Headers at once, then a byte now and then, never the end.
  "/slow": (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    const timer = setInterval(() => res.write("<p>."), 100);
    res.on("close", () => clearInterval(timer));
  },
};

function send(res: ServerResponse, type: string, body: string | Buffer, status = 200) {
  res.writeHead(status, { "content-type": type }).end(body);
}
function html(res: ServerResponse, body: string) {
  send(res, "text/html; charset=utf-8", body);
}
function streamHtml(res: ServerResponse, bytes: number, declare = false) {
  const head = "<html><head><title>Huge</title></head><body><article><h1>Huge</h1>";
  res.writeHead(200, {
    "content-type": "text/html",
    ...(declare ? { "content-length": String(bytes) } : {}),
  });
  let sent = head.length;
  res.write(head);
  const pump = () => {
    while (sent < bytes) {
      const chunk = para.slice(0, Math.min(para.length, bytes - sent));
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
    res.end();
  };
  pump();
}

let server: Server;
let origin: string;
let port: number;
const requests: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const route = ROUTES[new URL(req.url ?? "/", "http://x").pathname];
    if (route) route(req, res);
    else send(res, "text/plain", "no such page", 404);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
);
let trap: { attempts: string[] };
beforeEach(() => {
  trap = trapOutsideConnections();
  requests.length = 0;
});
afterEach(() => vi.restoreAllMocks());

/** Names the tests use; nothing reaches a real resolver. */
const DNS: Record<string, string[]> = {
  "pages.test": ["127.0.0.1"],
  "private.test": ["10.0.0.1"],
  "meta.test": ["169.254.169.254"],
  "mapped.test": ["::ffff:127.0.0.1"],
  "mixed.test": [PUBLIC_ADDRESS, "127.0.0.1"],
};
const resolve = async (hostname: string): Promise<LookupAddress[]> => {
  const addresses = DNS[hostname];
  if (!addresses) throw new Error(`test resolver: unknown host ${hostname}`);
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

const tool = createWebFetchTool({ maxBytes: 512 * 1024, timeoutMs: 1_500, maxRedirects: 3 });

function fetchPage(input: unknown, outbound: OutboundPolicy = { ...LOOPBACK_OPENED, resolve }) {
  return tool.run(WebFetchInput().parse(input), testToolContext({ outbound }));
}

interface Page {
  url: string;
  title: string;
  markdown: string;
  truncated: boolean;
}

describe("web_fetch", () => {
  it("answers an article's readable text as Markdown, its title and final URL, without menus, scripts or styles", async () => {
    const { value, details } = await fetchPage({ url: `${origin}/redirect?to=/article` });
    const page = value as Page;
    expect(page.url).toBe(`${origin}/article`);
    expect(page.title).toMatch(/Kyoto's temples/);
    expect(page.markdown).toContain("Kinkaku-ji, the golden pavilion");
    // Relative links read against the URL that answered.
    expect(page.markdown).toContain(`[the guide to Ryoan-ji](${origin}/guides/ryoan-ji)`);
    expect(page.markdown).toMatch(/^-\s+Kinkaku-ji$/m);
    for (const noise of ["SCRIPT-TEXT", "MENU-TEXT", "color: red", "<p>"]) {
      expect(page.markdown).not.toContain(noise);
    }
    expect(page.truncated).toBe(false);
    expect(details).toMatchObject({ status: 200, redirects: 1 });
  });

  it("answers a page with no article as its whole body", async () => {
    const page = (await fetchPage({ url: `${origin}/list` })).value as Page;
    expect(page.markdown).toMatch(/-\s+one\n-\s+two/);
  });

  it("answers a 5 MB page as bounded text, reading only its first bytes", async () => {
    for (const path of ["/huge", "/huge-declared"]) {
      const { value, details } = await fetchPage({ url: `${origin}${path}`, max_chars: 5_000 });
      const page = value as Page;
      expect(page.truncated, path).toBe(true);
      expect(page.markdown.length, path).toBeLessThanOrEqual(5_000);
      expect(page.markdown.length, path).toBeGreaterThan(1_000);
      expect(page.markdown, path).toContain("Words that a reader would read");
      expect(page.title, path).toBe("Huge");
      expect((details as { bytes: number }).bytes, path).toBe(512 * 1024);
    }
  });

  it("answers text types as they are, in their declared charset", async () => {
    expect(((await fetchPage({ url: `${origin}/plain` })).value as Page).markdown).toBe(
      "# not a heading\nplain words",
    );
    expect(((await fetchPage({ url: `${origin}/json` })).value as Page).markdown).toBe('{"a":1}');
    expect(((await fetchPage({ url: `${origin}/latin1` })).value as Page).markdown).toBe("café");
  });

  it("refuses content that is not a page or text, naming its type", async () => {
    for (const [path, type] of [
      ["/pdf", "application/pdf"],
      ["/png", "image/png"],
      ["/octet", "application/octet-stream"],
    ]) {
      const error = await fetchPage({ url: `${origin}${path}` }).catch((e) => e);
      expect(error, path).toMatchObject({ code: "web_fetch_unsupported_type" });
      expect(error.message, path).toContain(type);
    }
  });

  it("refuses an error status, an endless redirect and a page slower than its time bound", async () => {
    expect(await fetchPage({ url: `${origin}/missing` }).catch((e) => e)).toMatchObject({
      code: "web_fetch_status",
      details: { status: 404 },
    });
    expect(await fetchPage({ url: `${origin}/loop` }).catch((e) => e)).toMatchObject({
      code: "too_many_redirects",
    });
    expect(requests.filter((r) => r === "/loop")).toHaveLength(4);
    expect(await fetchPage({ url: `${origin}/slow` }).catch((e) => e)).toMatchObject({
      code: "http_timeout",
    });
  });

  it("refuses wrong types, other schemes, oversized URLs and unknown fields at the input", () => {
    for (const bad of [
      {},
      { url: 42 },
      { url: ["http://a.test/"] },
      { url: "ftp://a.test/file" },
      { url: "file:///etc/passwd" },
      { url: "javascript:alert(1)" },
      { url: "/relative" },
      { url: `http://a.test/${"x".repeat(8200)}` },
      { url: "http://a.test/", max_chars: 10 },
      { url: "http://a.test/", max_chars: 1_000_000 },
      { url: "http://a.test/", max_chars: "5000" },
      { url: "http://a.test/", headers: { cookie: "x" } },
      { url: "http://a.test/", method: "POST" },
    ]) {
      expect(WebFetchInput().safeParse(bad).success, JSON.stringify(bad).slice(0, 80)).toBe(false);
    }
  });
});

describe("web_fetch holds every rule of the outbound policy", () => {
  const closed: OutboundPolicy = { ...CLOSED_POLICY, resolve };

  it("refuses every spelling of loopback where the operator opened nothing, before a byte leaves", async () => {
    const spellings = [...LOOPBACK_LITERALS, "pages.test", "mapped.test", "mixed.test"];
    for (const host of spellings) {
      const error = await fetchPage({ url: `http://${host}:${port}/article` }, closed).catch(
        (e) => e,
      );
      expect(error, host).toMatchObject({ code: "address_forbidden" });
    }
    expect(requests).toEqual([]);
  });

  it("refuses metadata and private addresses, by literal and by a name that resolves there, even with loopback opened", async () => {
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      "http://[::ffff:169.254.169.254]/",
      "http://[fd00:ec2::254]/",
      "http://100.100.100.200/",
      "http://meta.test/",
      "http://10.0.0.1/",
      "http://private.test/",
      "http://192.168.1.1/",
    ]) {
      const error = await fetchPage({ url }).catch((e) => e);
      expect(error, url).toMatchObject({ code: "address_forbidden" });
      expect(error.message, url).toMatch(/metadata|link-local|private/);
    }
    // Names reach the guarded lookup, which refuses them; no address outside loopback is dialled.
    expect(trap.attempts.filter((host) => isIP(host) && !host.startsWith("127."))).toEqual([]);
  });

  it("refuses a redirect to a private, metadata or own-listener address at that hop", async () => {
    const ownPort: OutboundPolicy = {
      ...LOOPBACK_OPENED,
      ownPorts: new Set([port + 1]),
      resolve,
    };
    for (const to of [
      "http://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data/",
      "http://private.test/",
      `http://127.0.0.1:${port + 1}/`,
    ]) {
      const error = await fetchPage(
        { url: `${origin}/redirect?to=${encodeURIComponent(to)}` },
        ownPort,
      ).catch((e) => e);
      expect(error, to).toMatchObject({ code: "address_forbidden" });
    }
  });

  it("refuses the stack's own listeners whatever the operator opened", async () => {
    const own: OutboundPolicy = { ...LOOPBACK_OPENED, ownPorts: new Set([port]), resolve };
    const error = await fetchPage({ url: `${origin}/article` }, own).catch((e) => e);
    expect(error).toMatchObject({ code: "address_forbidden" });
    expect(error.message).toMatch(/own listeners/);
    expect(requests).toEqual([]);
  });
});

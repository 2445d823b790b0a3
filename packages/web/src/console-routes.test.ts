import { brotliDecompressSync } from "node:zlib";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { consoleAssets, pickEncoding } from "./assets";
import { CONSOLE_CSP, consoleRoutes } from "./console-routes";

const app = new Hono().route("/ui", consoleRoutes("/ui"));

describe("consoleRoutes", () => {
  it.each(["/ui", "/ui/", "/ui/tasks/tsk_1", "/ui/schedules"])(
    "answers the console's page at %s, under a strict CSP",
    async (path) => {
      const response = await app.request(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
      const html = await response.text();
      expect(html.startsWith("<!doctype html>")).toBe(true);
      expect(html).toContain(`src="/ui/assets/${consoleAssets.js.name}"`);
      expect(html).toContain(`href="/ui/assets/${consoleAssets.css.name}"`);
    },
  );

  it("tells the page whether the server has an LLM", async () => {
    const without = new Hono().route("/ui", consoleRoutes("/ui", { llmConfigured: false }));
    const none = await (await without.request("/ui/tasks/new")).text();
    expect(none).toContain('<meta name="stackvm-llm" content="none"/>');
    const html = await (await app.request("/ui/tasks/new")).text();
    expect(html).toContain('<meta name="stackvm-llm" content="configured"/>');
  });

  it("serves an asset compressed, cached for good under its hashed name", async () => {
    const response = await app.request(`/ui/assets/${consoleAssets.js.name}`, {
      headers: { "accept-encoding": "gzip, br" },
    });
    expect(response.headers.get("content-encoding")).toBe("br");
    expect(response.headers.get("cache-control")).toContain("immutable");
    const body = Buffer.from(await response.arrayBuffer());
    expect(brotliDecompressSync(body).toString()).toBe(consoleAssets.js.body);
  });

  it("answers 404 with a JSON error for an asset it does not have", async () => {
    const response = await app.request("/ui/assets/console.old.js");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "not_found" } });
  });
});

describe("pickEncoding", () => {
  it.each([
    ["gzip, deflate, br", "br"],
    ["gzip", "gzip"],
    ["br;q=0, gzip;q=0.5", "gzip"],
    ["", "identity"],
    [undefined, "identity"],
  ])("picks from %j: %s", (header, encoding) => {
    expect(pickEncoding(header)).toBe(encoding);
  });
});

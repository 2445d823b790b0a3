/**
 * A web page on another origin watches a task in Debian's Chromium with a
 * native `EventSource` and only a stream token (issue 41, items 3 and 5): the
 * stack lists the page's origin in `STACKVM_CORS_ORIGINS`, the test (the page's
 * server, in a real app) asks for the token with the API key, and the page
 * gets the answer as it is written, the end, and a 204 on its reconnect after
 * the end, which stops its EventSource; the same token cannot cancel the task.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/plans";
import { startTestStack, type TestStack } from "../support/stack";
import { launchBrowser, requireChromium, type TestBrowser } from "./browser";

const ANSWER = "Kyoto in autumn: maples over moss, temple bells at dusk, and tea by the river.";
/** One model call whose text is the final answer, as it streams. */
const PLAN = [call(0, "llm_generate", { prompt: "Describe Kyoto." }, ["final_answer"])];

/** The page: nothing but a native EventSource on the URL in its hash, and what it saw. */
const PAGE_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Watching a task</title>
<style>body{font:16px system-ui;margin:2rem;max-width:46rem}#text{white-space:pre-wrap;border:1px solid #ccc;padding:1rem;min-height:3rem}
dt{font-weight:600;margin-top:.5rem}</style></head>
<body><h1>A task, watched from another origin</h1>
<p>With a native <code>EventSource</code> and a stream token only: no API key in this page.</p>
<dl><dt>Answer as it is written</dt><dd id="text"></dd>
<dt>Status</dt><dd id="status">connecting</dd>
<dt>Events</dt><dd id="log"></dd>
<dt>Cancel with the same token</dt><dd id="cancel">not tried</dd></dl>
<script>
const url = decodeURIComponent(location.hash.slice(1));
const seen = { opens: 0, tokens: 0, commits: 0, errors: 0, end: null, text: "", closed: false };
window.seen = seen;
const log = (line) => { document.getElementById("log").textContent += line + " · "; };
const source = new EventSource(url);
source.onopen = () => { seen.opens++; log("open"); };
source.addEventListener("token", (e) => {
  const data = JSON.parse(e.data);
  if (!data.final_answer) return;
  seen.tokens++;
  seen.text += data.text;
  document.getElementById("text").textContent = seen.text;
});
source.addEventListener("commit", () => { seen.commits++; log("commit"); });
source.addEventListener("status", (e) => {
  document.getElementById("status").textContent = JSON.parse(e.data).status;
});
source.addEventListener("end", (e) => { seen.end = JSON.parse(e.data).status; log("end"); });
source.onerror = () => {
  seen.errors++;
  if (source.readyState === EventSource.CLOSED) {
    seen.closed = true;
    log("closed by the server (its reconnect after the end answered 204)");
  }
};
</script></body></html>`;

let stack: TestStack;
let browser: TestBrowser;
let pageServer: Server;
let pageOrigin: string;
let release: () => void = () => undefined;

beforeAll(async () => {
  requireChromium();
  pageServer = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(PAGE_HTML);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, "127.0.0.1", resolve));
  // Another origin than the API's: another host name and port.
  pageOrigin = `http://localhost:${(pageServer.address() as AddressInfo).port}`;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  [stack, browser] = await Promise.all([
    startTestStack({
      // The answer waits for the page to load: within the LLM's timeout, never tried again.
      env: { STACKVM_CORS_ORIGINS: pageOrigin, LLM_TIMEOUT_MS: "30000" },
      streaming: {
        chunkChars: 4,
        chunkDelayMs: 40,
        // The model starts writing once the page watches.
        beforeChunk: (index, _text, request) =>
          request.schemaName === "text" && index === 0 ? held : undefined,
      },
    }),
    launchBrowser(),
  ]);
  stack.llm.on("text", ANSWER);
});

afterAll(async () => {
  release();
  await browser?.close();
  await stack?.stop();
  await new Promise((resolve) => pageServer?.close(resolve));
});

describe("a page on another origin with only a stream token", () => {
  it("watches the answer being written, sees the end, and its EventSource stops on the 204", async () => {
    const created = await stack.api("POST", "/v1/tasks", { goal: "Describe Kyoto.", plan: PLAN });
    expect(created.status).toBe(202);
    const taskId = created.body.task_id as string;
    // The page's server asks for the token with the key; the page gets the URL only.
    const made = await stack.api("POST", `/v1/tasks/${taskId}/stream-token`, { ttl_seconds: 300 });
    expect(made.status).toBe(201);
    const eventsUrl = made.body.events_url as string;
    expect(eventsUrl).toContain("?token=stk_");
    expect(eventsUrl).not.toContain(stack.apiKey);

    const page = await browser.page({ width: 900, height: 700 });
    const apiRequests: string[] = [];
    page.on("request", (request) => {
      if (request.url().startsWith(stack.url)) {
        apiRequests.push(`${request.method()} ${new URL(request.url()).pathname}`);
        expect(request.headers().authorization).toBeUndefined();
      }
    });
    await page.goto(`${pageOrigin}/#${encodeURIComponent(eventsUrl)}`);
    await page.waitForFunction(() => (window as any).seen.opens === 1);
    release();

    await page.waitForFunction(() => (window as any).seen.closed === true, undefined, {
      timeout: 30_000,
    });
    const seen = await page.evaluate(() => (window as any).seen);
    expect(seen.text).toBe(ANSWER);
    // Live text: in more than one piece, before the commit that holds it.
    expect(seen.tokens).toBeGreaterThan(1);
    expect(seen.end).toBe("completed");
    expect(seen.commits).toBe(2);
    expect(seen.opens).toBe(1);
    expect(await page.locator("#status").textContent()).toBe("completed");

    // The same token cannot write: the page reads the refusal (CORS lets it).
    const cancel = await page.evaluate(async (url) => {
      const response = await fetch(url.replace("/events?", "/cancel?"), { method: "POST" });
      return { status: response.status, code: (await response.json()).error.code };
    }, eventsUrl);
    expect(cancel).toEqual({ status: 403, code: "stream_token_scope" });
    await page.evaluate((answer) => {
      document.getElementById("cancel")!.textContent =
        `POST …/cancel?token=… answered ${answer.status} ${answer.code}`;
    }, cancel);

    // Stopped: a reconnect interval later it has asked nothing more.
    await page.waitForTimeout(1_500);
    expect(await page.evaluate(() => (window as any).seen.opens)).toBe(1);
    expect(apiRequests.filter((r) => r.endsWith("/events"))).toHaveLength(2);
    const path = await browser.screenshot(page, "stream-token-page");
    expect(existsSync(path)).toBe(true);
    await page.close();
  });
});

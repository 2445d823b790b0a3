/**
 * The web tools through the whole local stack, configured as an operator
 * configures them (`STACKVM_WEB_SEARCH_*` in the environment): a goal that the
 * scripted planner answers with `web_search` then `web_fetch` runs against a
 * scripted provider speaking Tavily's API and a page on loopback; the search's
 * price is in the task's usage; the planner sees the tools only where the
 * namespace allows them. Then an ordinary tenant aims `web_fetch` everywhere the
 * tenant-walls tests aim `http_request` (the stack's own listeners by every
 * spelling of loopback, metadata and private addresses, redirects, names that
 * resolve privately), on a stack with loopback opened and on one with nothing
 * opened: each is refused with the guard's error, and nothing arrives.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attackerKey, failedCall } from "../support/attacker";
import {
  LOOPBACK_SPELLINGS,
  METADATA_AND_PRIVATE_URLS,
  resolveWallsName as resolve,
} from "../support/hostile-addresses";
import type { RecordedRequest } from "../support/llm-server";
import { type ScriptedSearchProvider, startSearchProvider } from "../support/search-provider";
import { startTestStack, type TestStack } from "../support/stack";

const MARKER = "web-walls-marker";

const PAGE = `<!doctype html><html><head><title>Kyoto in autumn</title></head><body>
<nav>MENU</nav><article><h1>Kyoto in autumn</h1>
${"<p>The maples of Tofuku-ji turn red in the middle of November, and the crowds come with them.</p>".repeat(5)}
</article></body></html>`;

let open: TestStack;
let closed: TestStack;
let provider: ScriptedSearchProvider;
let pages: Server;
let pagesPort: number;
let trap: ReturnType<typeof createTcpServer>;
let trapPort: number;
let trapConnections = 0;
const marked: Record<string, string[]> = {};
let attacker: { open: string; closed: string };

beforeAll(async () => {
  provider = await startSearchProvider();
  trap = createTcpServer((socket) => {
    trapConnections++;
    socket.destroy();
  });
  await new Promise<void>((r) => trap.listen(0, "127.0.0.1", r));
  trapPort = (trap.address() as AddressInfo).port;
  pages = createHttpServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/redirect") {
      return void res.writeHead(302, { location: url.searchParams.get("to") ?? "/" }).end();
    }
    if (url.pathname === "/huge") {
      res.writeHead(200, { "content-type": "text/html" });
      res.write("<html><head><title>Huge</title></head><body><article>");
      const chunk = `<p>${"a page of five megabytes, ".repeat(40)}</p>`;
      for (let sent = 0; sent < 5_000_000; sent += chunk.length) res.write(chunk);
      return void res.end("</article></body></html>");
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
  });
  await new Promise<void>((r) => pages.listen(0, "127.0.0.1", r));
  pagesPort = (pages.address() as AddressInfo).port;
  const noSandbox = { run: async () => Promise.reject(new Error("no sandbox in this test")) };
  open = await startTestStack({
    resolve,
    sandbox: noSandbox,
    env: {
      STACKVM_MAX_PLAN_UPDATES: "0",
      STACKVM_WEB_SEARCH_PROVIDER: "tavily",
      STACKVM_WEB_SEARCH_API_KEY: provider.key,
      STACKVM_WEB_SEARCH_BASE_URL: provider.origin,
      STACKVM_WEB_SEARCH_PRICE_USD: "0.25",
    },
  });
  closed = await startTestStack({
    resolve,
    sandbox: noSandbox,
    env: { STACKVM_MAX_PLAN_UPDATES: "0", STACKVM_OPEN_PRIVATE_RANGES: undefined },
  });
  for (const [name, server] of Object.entries(open.stack.servers)) {
    marked[name] = [];
    server.on("request", (req: IncomingMessage) => {
      if (req.url?.includes(MARKER)) marked[name]!.push(`${req.method} ${req.url}`);
    });
  }
  attacker = { open: await attackerKey(open), closed: await attackerKey(closed) };
}, 90_000);

afterAll(async () => {
  await Promise.all([open?.stop(), closed?.stop(), provider?.close()]);
  trap?.close();
  pages?.closeAllConnections();
  pages?.close();
});

async function putNamespace(t: TestStack, key: string, name: string, tools: string[]) {
  const put = await t.api(
    "PUT",
    `/v1/namespaces/${name}`,
    { allowed_tools: tools, allowed_hosts: [] },
    { key },
  );
  expect(put.status, JSON.stringify(put.body)).toBe(200);
}

const prompt = (r: RecordedRequest) => r.messages.map((m) => m.content).join("\n");

async function commitsOf(t: TestStack, taskId: string, key?: string) {
  const { body } = await t.api(
    "GET",
    `/v1/tasks/${taskId}/branches/main/commits?limit=100`,
    undefined,
    key ? { key } : {},
  );
  return (body.commits as Array<Record<string, any>>).reverse();
}

describe("a goal that searches the web and reads a page", () => {
  it("answers from the scripted provider and the loopback page, with the search's price in usage", async () => {
    const page = `http://127.0.0.1:${pagesPort}/kyoto`;
    open.llm.on("plan", {
      reasoning: "search, read the best page, answer from it",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "web_search",
            tool_params: { query: "kyoto autumn maples", max_results: 3 },
            output_vars: ["hits"],
          },
        },
        {
          seq_no: 1,
          type: "calling",
          parameters: { tool_name: "web_fetch", tool_params: { url: page }, output_vars: ["page"] },
        },
        {
          seq_no: 2,
          type: "assign",
          parameters: {
            final_answer: "${hits.results.0.title} / ${page.title} / ${page.markdown}",
          },
        },
      ],
    });
    const created = await open.api("POST", "/v1/tasks", {
      goal: "When do Kyoto's maples turn red?",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const task = await open.waitForTask(created.body.task_id);
    expect(task.status, JSON.stringify(task)).toBe("completed");
    expect(task.final_answer).toContain("Result 1 for kyoto autumn maples / Kyoto in autumn / ");
    expect(task.final_answer).toContain("turn red in the middle of November");
    expect(task.final_answer).not.toContain("MENU");
    // The provider got the key, the query and the count; the plan never saw the key.
    expect(provider.requests.at(-1)).toMatchObject({
      method: "POST",
      path: "/search",
      body: { query: "kyoto autumn maples", max_results: 3 },
    });
    expect(provider.requests.at(-1)!.headers.authorization).toBe(`Bearer ${provider.key}`);
    const commits = await commitsOf(open, task.task_id);
    expect(JSON.stringify(commits)).not.toContain(provider.key);
    const searched = commits.find((c) => c.llm_calls?.some((l: any) => l.purpose === "web_search"));
    expect(searched!.llm_calls).toEqual([
      expect.objectContaining({ purpose: "web_search", model: "tavily", cost_usd: 0.25 }),
    ]);
    expect(task.usage.cost_usd).toBeGreaterThanOrEqual(0.25);
  }, 60_000);

  it("answers a 5 MB page as bounded text", async () => {
    const plan = [
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "web_fetch",
          tool_params: { url: `http://127.0.0.1:${pagesPort}/huge`, max_chars: 4000 },
          output_vars: ["page"],
        },
      },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${page}" } },
    ];
    const created = await open.api("POST", "/v1/tasks", { plan });
    const task = await open.waitForTask(created.body.task_id);
    expect(task.status, JSON.stringify(task)).toBe("completed");
    expect(task.final_answer).toMatchObject({ title: "Huge", truncated: true });
    expect(task.final_answer.markdown.length).toBeLessThanOrEqual(4000);
    expect(task.final_answer.markdown).toContain("a page of five megabytes");
  }, 60_000);

  it("shows the planner both tools where the namespace allows them, and neither where it does not", async () => {
    open.llm.on("plan", {
      reasoning: "nothing to do",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "ok" } }],
    });
    await putNamespace(open, open.apiKey, "no-web", ["llm_generate"]);
    for (const namespace of ["default", "no-web"]) {
      const created = await open.api("POST", "/v1/tasks", {
        goal: `Say ok (${namespace}).`,
        namespace,
      });
      expect((await open.waitForTask(created.body.task_id)).status).toBe("completed");
    }
    const prompts = open.llm.requests.filter((r) => r.schemaName === "plan").map(prompt);
    const withWeb = prompts.find((p) => p.includes("(default)"))!;
    const without = prompts.find((p) => p.includes("(no-web)"))!;
    expect(withWeb).toMatch(/- web_search: Searches the web/);
    expect(withWeb).toMatch(/- web_fetch: Reads one web page/);
    expect(without).not.toContain("web_search");
    expect(without).not.toContain("web_fetch");
    const tools = await open.api("GET", "/v1/tools?namespace=default");
    expect(tools.body.tools.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(["web_search", "web_fetch"]),
    );
    // A plan that calls them where they are not allowed is refused before it runs.
    const refused = await open.api("POST", "/v1/tasks", {
      namespace: "no-web",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "web_fetch",
            tool_params: { url: "https://example.com/" },
            output_vars: ["p"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${p}" } },
      ],
    });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain("web_fetch");
  }, 60_000);

  it("says web search is not configured, naming the setting, where the operator set no provider", async () => {
    const error = await failedCall(closed, closed.apiKey, "default", "web_search", { query: "x" });
    expect(error).toMatchObject({ code: "web_search_not_configured" });
    expect(error.message).toContain("STACKVM_WEB_SEARCH_PROVIDER");
  }, 60_000);
});

describe("a tenant aiming web_fetch where the outbound policy refuses", () => {
  function ownTargets(t: TestStack): number[] {
    return [
      t.stack.port,
      Number(new URL(t.stack.endpoints.dynamodb).port),
      Number(new URL(t.stack.endpoints.sqs).port),
    ];
  }

  it("is refused at the stack's own listeners by every spelling of loopback, loopback opened", async () => {
    await putNamespace(open, attacker.open, "web", ["web_fetch", "web_search"]);
    const [api, dynamo, fauxqs] = ownTargets(open);
    const urls = [
      ...LOOPBACK_SPELLINGS.map((host) => `http://${host}:${dynamo}/${MARKER}`),
      ...["127.1", "[::1]", "sneaky.walls.test"].flatMap((host) => [
        `http://${host}:${api}/${MARKER}`,
        `http://${host}:${fauxqs}/${MARKER}`,
      ]),
    ];
    const errors = await Promise.all(
      urls.map((url) => failedCall(open, attacker.open, "web", "web_fetch", { url })),
    );
    errors.forEach((error, i) => {
      expect(error, urls[i]).toMatchObject({ code: "address_forbidden" });
      expect(error.message, urls[i]).toMatch(/own listeners|allowed_hosts cannot open/);
    });
    expect(marked).toEqual({ api: [], dynamodb: [], fauxqs: [] });
  }, 120_000);

  it("is refused through a redirect to an own listener, a metadata or a private address", async () => {
    const [, dynamo] = ownTargets(open);
    const targets = [
      `http://127.0.0.1:${dynamo}/${MARKER}`,
      `http://sneaky.walls.test:${open.stack.port}/${MARKER}`,
      "http://169.254.169.254/latest/meta-data/",
      "http://private.walls.test/",
    ];
    const errors = await Promise.all(
      targets.map((to) =>
        failedCall(open, attacker.open, "web", "web_fetch", {
          url: `http://127.0.0.1:${pagesPort}/redirect?to=${encodeURIComponent(to)}`,
        }),
      ),
    );
    for (const error of errors) expect(error).toMatchObject({ code: "address_forbidden" });
    expect(marked).toEqual({ api: [], dynamodb: [], fauxqs: [] });
  }, 60_000);

  it("is refused at metadata and private addresses, by literal and by name", async () => {
    const urls = METADATA_AND_PRIVATE_URLS;
    const errors = await Promise.all(
      urls.map((url) => failedCall(open, attacker.open, "web", "web_fetch", { url })),
    );
    errors.forEach((error, i) => {
      expect(error, urls[i]).toMatchObject({ code: "address_forbidden" });
      expect(error.message, urls[i]).toMatch(/metadata|link-local|private/);
    });
  }, 60_000);

  it("is refused at every spelling of loopback where the operator opened nothing; the trap sees no connection", async () => {
    await putNamespace(closed, attacker.closed, "web", ["web_fetch"]);
    const urls = LOOPBACK_SPELLINGS.map((host) => `http://${host}:${trapPort}/${MARKER}`);
    const errors = await Promise.all(
      urls.map((url) => failedCall(closed, attacker.closed, "web", "web_fetch", { url })),
    );
    errors.forEach((error, i) => {
      expect(error, urls[i]).toMatchObject({ code: "address_forbidden" });
      expect(error.message, urls[i]).toMatch(/loopback|unspecified/);
    });
    expect(trapConnections).toBe(0);
  }, 120_000);

  it("cannot reach the provider's key or aim the search elsewhere through its input", async () => {
    for (const params of [
      { query: "x", base_url: "http://169.254.169.254/" },
      { query: "x", api_key: "mine" },
      { query: "x".repeat(401) },
      { query: 7 },
    ]) {
      const created = await open.api(
        "POST",
        "/v1/tasks",
        {
          namespace: "web",
          plan: [
            {
              seq_no: 0,
              type: "calling",
              parameters: { tool_name: "web_search", tool_params: params, output_vars: ["r"] },
            },
            { seq_no: 1, type: "assign", parameters: { final_answer: "${r}" } },
          ],
        },
        { key: attacker.open },
      );
      expect(created.status, JSON.stringify(params).slice(0, 60)).toBe(422);
    }
  }, 60_000);
});

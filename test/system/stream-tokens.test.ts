/**
 * Browsers (issue 41, item 3), against the local stack: CORS for the origins
 * the operator lists (a preflight answers 204 before any key is asked for), and
 * stream tokens, which read one task of one tenant until they expire and open
 * nothing else: not another task, not a write, not another tenant's task, not
 * once altered, not once expired (a token signed by the test itself with the
 * tenant's secret and a past expiry), not as a bearer key.
 */
import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tenantKey } from "../support/attacker";
import { call } from "../support/plans";
import { readSse } from "../support/sse";
import { startTestStack, type TestStack } from "../support/stack";

const PAGE = "http://page.example:8080";

let t: TestStack;
let mallory: string;

const PLAN = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];

beforeAll(async () => {
  t = await startTestStack({ env: { STACKVM_CORS_ORIGINS: `${PAGE},http://other.example` } });
  mallory = await tenantKey(t, "mallory", "m");
});
afterAll(async () => {
  await t?.stop();
});

async function finishedTask(key = t.apiKey): Promise<string> {
  const created = await t.api("POST", "/v1/tasks", { plan: PLAN }, { key });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  await t.waitForTask(created.body.task_id, { key });
  return created.body.task_id;
}

async function tokenFor(taskId: string, body?: unknown, key = t.apiKey) {
  const answer = await t.api("POST", `/v1/tasks/${taskId}/stream-token`, body, { key });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body as { token: string; task_id: string; expires_at: string; events_url: string };
}

/** A request with only the token (no key), as a page sends it. */
const withToken = (method: string, path: string, token: string, body?: unknown) =>
  t.api(
    method,
    `${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}`,
    body,
    {
      key: null,
    },
  );

/** A request sent with its path exactly as written (fetch would resolve `..` first). */
function rawRequest(method: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(t.url);
    const req = httpRequest({ host: url.hostname, port: url.port, method, path }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("CORS for the origins the operator lists", () => {
  it("answers a listed origin's preflight 204 with what it may send, without a key", async () => {
    const response = await fetch(`${t.url}/v1/tasks/tsk_any/events`, {
      method: "OPTIONS",
      headers: {
        origin: PAGE,
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization,last-event-id",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-allow-headers")).toBe(
      "authorization,last-event-id",
    );
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("names a listed origin on its answers, errors too, and never an origin it does not list", async () => {
    const taskId = await finishedTask();
    const ok = await t.api("GET", `/v1/tasks/${taskId}`, undefined, { headers: { origin: PAGE } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(ok.headers.get("access-control-expose-headers")).toContain("x-request-id");
    const refused = await t.api("GET", `/v1/tasks/${taskId}`, undefined, {
      key: null,
      headers: { origin: PAGE },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(PAGE);
    for (const origin of ["http://evil.example", `${PAGE}.evil.example`, "null"]) {
      const answer = await t.api("GET", `/v1/tasks/${taskId}`, undefined, { headers: { origin } });
      expect(answer.headers.get("access-control-allow-origin"), origin).toBeNull();
      const preflight = await fetch(`${t.url}/v1/tasks/${taskId}`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "DELETE" },
      });
      expect(preflight.headers.get("access-control-allow-origin"), origin).toBeNull();
    }
  });
});

describe("POST /v1/tasks/{id}/stream-token", () => {
  it("gives a token that opens the task's events and reads, with no key", async () => {
    const taskId = await finishedTask();
    const made = await tokenFor(taskId);
    expect(made.token).toMatch(/^stk_/);
    expect(made.task_id).toBe(taskId);
    expect(Date.parse(made.expires_at) - Date.now()).toBeGreaterThan(590_000);
    expect(made.events_url).toBe(`${t.url}/v1/tasks/${taskId}/events?token=${made.token}`);
    const response = await fetch(made.events_url);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("event: end");
    const task = await withToken("GET", `/v1/tasks/${taskId}`, made.token);
    expect(task.status).toBe(200);
    expect(task.body.final_answer).toBe("done");
    const commits = await withToken(
      "GET",
      `/v1/tasks/${taskId}/branches/main/commits?limit=5`,
      made.token,
    );
    expect(commits.status).toBe(200);
    expect(commits.body.commits.length).toBeGreaterThan(0);
  });

  it("takes a life between 30 s and an hour, and refuses anything else naming the field", async () => {
    const taskId = await finishedTask();
    const short = await tokenFor(taskId, { ttl_seconds: 30 });
    expect(Date.parse(short.expires_at) - Date.now()).toBeLessThanOrEqual(30_000);
    for (const body of [
      { ttl_seconds: 29 },
      { ttl_seconds: 3601 },
      { ttl_seconds: "60" },
      { ttl: 60 },
    ]) {
      const answer = await t.api("POST", `/v1/tasks/${taskId}/stream-token`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("answers 404 for another tenant's task and an unknown one, signing nothing", async () => {
    const taskId = await finishedTask();
    expect(
      (await t.api("POST", `/v1/tasks/${taskId}/stream-token`, {}, { key: mallory })).status,
    ).toBe(404);
    expect((await t.api("POST", "/v1/tasks/tsk_nope/stream-token")).status).toBe(404);
    expect(
      (await t.api("POST", `/v1/tasks/${taskId}/stream-token`, {}, { key: null })).status,
    ).toBe(401);
  });
});

describe("a stream token attacked", () => {
  it("opens no other task, nothing of the tenant's beyond its task, and no write", async () => {
    const taskId = await finishedTask();
    const other = await finishedTask();
    const { token } = await tokenFor(taskId);
    for (const [method, path] of [
      ["GET", `/v1/tasks/${other}`],
      ["GET", `/v1/tasks/${other}/events`],
      ["GET", "/v1/tasks"],
      ["GET", "/v1/namespaces"],
      ["GET", "/v1/keys"],
      ["GET", "/v1/webhook-secret"],
      ["POST", `/v1/tasks/${taskId}/cancel`],
      ["POST", `/v1/tasks/${taskId}/retry`],
      ["POST", `/v1/tasks/${taskId}/stream-token`],
      ["DELETE", `/v1/tasks/${taskId}`],
      ["POST", `/v1/tasks/${taskId}/branches`],
      ["POST", "/v1/tasks"],
      ["GET", `/v1/tasks/${taskId}/../${other}`],
    ] as const) {
      const answer = await withToken(method, path, token, method === "GET" ? undefined : {});
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error.code).toBe("stream_token_scope");
    }
    // Nothing was done: the task is still there, as it was.
    expect((await t.api("GET", `/v1/tasks/${taskId}`)).body.status).toBe("completed");
    expect((await t.api("GET", `/v1/tasks/${taskId}/branches`)).body.branches).toHaveLength(1);
  });

  it("opens its task's commits but not their LLM calls' traces, which hold the whole prompts", async () => {
    t.llm.on("text", "Said.");
    const created = await t.api("POST", "/v1/tasks", {
      plan: [call(0, "llm_generate", { prompt: "Say it." }, ["final_answer"])],
    });
    const taskId = created.body.task_id as string;
    await t.waitForTask(taskId);
    const { token } = await tokenFor(taskId);
    const commits = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=5`);
    const withCall = commits.body.commits.find(
      (c: { llm_calls?: unknown[] }) => (c.llm_calls?.length ?? 0) > 0,
    );
    expect(withCall).toBeDefined();
    const path = `/v1/tasks/${taskId}/commits/${withCall.commit_id}/llm-calls/0`;
    expect((await t.api("GET", path)).status).toBe(200);
    for (const variant of [
      path,
      `${path}?raw=1`,
      path.replace("llm-calls", "llm-calls/"),
      path.replace("llm-calls", "llm%2Dcalls"),
      path.replace("llm-calls", "llm%2dcalls"),
      path.replace("/llm-calls", "//llm-calls"),
    ]) {
      const answer = await withToken("GET", variant, token);
      expect(answer.status, variant).toBe(403);
      expect(answer.body.error.code).toBe("stream_token_scope");
    }
    expect(
      (await withToken("GET", `/v1/tasks/${taskId}/commits/${withCall.commit_id}`, token)).status,
    ).toBe(200);
  });

  it("opens no other task through a path written to look like its own", async () => {
    const taskId = await finishedTask();
    const other = await finishedTask();
    const { token } = await tokenFor(taskId);
    const q = `token=${encodeURIComponent(token)}`;
    for (const [method, path] of [
      ["GET", `/v1/tasks/${taskId}/../${other}?${q}`],
      ["GET", `/v1/tasks/${taskId}/../../tasks/${other}/events?${q}`],
      ["GET", `/v1/tasks/${taskId}/%2e%2e/${other}?${q}`],
      ["GET", `/v1/tasks/${taskId}/%2E%2E/${other}/events?${q}`],
      ["GET", `/v1/tasks/${taskId}/.%2e/${other}?${q}`],
      ["GET", `/v1/tasks/${taskId}%2F..%2F${other}?${q}`],
      ["GET", `/v1/tasks/${taskId}/..%2F${other}?${q}`],
      ["GET", `/v1/tasks/${taskId}/./../${other}?${q}`],
      ["GET", `//v1/tasks/${other}?${q}`],
      ["GET", `/v1/tasks//${other}?${q}`],
      ["GET", `/v1/tasks/${other}/?${q}`],
      ["GET", `/v1//tasks/${other}?${q}`],
      ["GET", `/V1/tasks/${other}?${q}`],
      ["HEAD", `/v1/tasks/${other}?${q}`],
      ["GET", `/v1/tasks/${other}?${q}&${q}`],
      ["GET", `/v1/tasks/${other}?token=&${q}`],
      ["GET", `/v1/tasks/${taskId}?${q}%26task_id%3D${other}`],
      ["GET", `/v1/tasks?${q}`],
    ] as const) {
      const answer = await rawRequest(method, path);
      // Refused (403, or 401 for a token the query mangled), or no such route (404):
      // never the other task.
      expect([401, 403, 404], `${method} ${path}: ${answer.body}`).toContain(answer.status);
      expect(answer.body, `${method} ${path}`).not.toContain(`"task_id":"${other}"`);
    }
    // The token's own task through the same client, to show the request reaches it.
    const own = await rawRequest("GET", `/v1/tasks/${taskId}?${q}`);
    expect(own.status).toBe(200);
    expect(own.body).toContain(`"task_id":"${taskId}"`);
  });

  it("opens nothing once its task is deleted", async () => {
    const taskId = await finishedTask();
    const { token } = await tokenFor(taskId);
    expect((await t.api("DELETE", `/v1/tasks/${taskId}`)).status).toBeLessThan(300);
    for (const path of [
      `/v1/tasks/${taskId}`,
      `/v1/tasks/${taskId}/events`,
      `/v1/tasks/${taskId}/branches`,
    ]) {
      const answer = await withToken("GET", path, token);
      expect(answer.status, path).toBe(404);
    }
  });

  it("opens nothing of another tenant, even with a task id that tenant has", async () => {
    const theirs = await finishedTask(mallory);
    const { token } = await tokenFor(theirs, {}, mallory);
    // Alice's task with Mallory's token: another task.
    const ours = await finishedTask();
    expect((await withToken("GET", `/v1/tasks/${ours}`, token)).status).toBe(403);
    // Mallory's token names Mallory's tenant: rewritten to Alice's, its MAC no longer holds.
    const [body, mac] = token.slice(4).split(".");
    const payload = JSON.parse(Buffer.from(body!, "base64url").toString());
    const forged = `stk_${Buffer.from(JSON.stringify({ ...payload, t: "local", k: ours })).toString("base64url")}.${mac}`;
    const answer = await withToken("GET", `/v1/tasks/${ours}`, forged);
    expect(answer.status).toBe(401);
    expect(answer.body.error.message).toMatch(/stream token is not valid/);
  });

  it("refuses an altered token, an expired one and a token sent as a bearer key", async () => {
    const taskId = await finishedTask();
    const { token } = await tokenFor(taskId);
    const flipped = `${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}`;
    for (const bad of [flipped, `${token}x`, "stk_", "", "svm_local_guess"]) {
      const answer = await withToken("GET", `/v1/tasks/${taskId}/events`, bad);
      expect(answer.status, bad).toBe(401);
    }
    // Expired: signed the way the server signs, with the tenant's own secret, a minute ago.
    const { secret } = (await t.api("GET", "/v1/webhook-secret")).body;
    const payload = { v: 1, t: "local", k: taskId, e: Math.floor(Date.now() / 1000) - 60 };
    const part = Buffer.from(JSON.stringify(payload)).toString("base64url");
    const key = createHmac("sha256", secret).update("stackvm stream token v1").digest();
    const expired = `stk_${part}.${createHmac("sha256", key).update(part).digest("base64url")}`;
    expect((await withToken("GET", `/v1/tasks/${taskId}`, expired)).status).toBe(401);
    // The same, unexpired, is what the server would have made: the check is the signature and the time.
    const live = { ...payload, e: payload.e + 600 };
    const livePart = Buffer.from(JSON.stringify(live)).toString("base64url");
    const fresh = `stk_${livePart}.${createHmac("sha256", key).update(livePart).digest("base64url")}`;
    expect((await withToken("GET", `/v1/tasks/${taskId}`, fresh)).status).toBe(200);
    // As a bearer key it is no key at all.
    expect((await t.api("GET", `/v1/tasks/${taskId}`, undefined, { key: token })).status).toBe(401);
  });

  it("lets a key sent beside a token decide: a bad key is refused, whatever the token", async () => {
    const taskId = await finishedTask();
    const { token } = await tokenFor(taskId);
    const read = await readSse(`${t.url}/v1/tasks/${taskId}/events?token=${token}`, "svm_bad");
    expect(read.status).toBe(401);
  });

  it("counts requests with a token by source address before checking it: a flood gets 429", async () => {
    const taskId = await finishedTask();
    const forged = `stk_${Buffer.from(JSON.stringify({ v: 1, t: "local", k: taskId, e: 9e9 })).toString("base64url")}.bad`;
    const answers = await Promise.all(
      Array.from({ length: 300 }, () => withToken("GET", `/v1/tasks/${taskId}`, forged)),
    );
    // 300 at once is more than 50 a second however slowly this machine answers them.
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    const limited = answers.find((a) => a.status === 429)!;
    expect(limited.body.error.code).toBe("source_rate_limited");
  });
});

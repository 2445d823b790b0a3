/**
 * The chat face as the SDKs integrators bring call it, at their defaults
 * (retries included): the official `openai` client, the Vercel AI SDK with
 * `@ai-sdk/openai-compatible`, and `@langchain/openai`, against the local stack
 * with the scripted LLM. Each SDK call is counted in tasks: a run that fails,
 * is cancelled or waits for a person is answered so that no SDK retries it, and
 * a retry the SDK makes anyway (a timeout) answers the same run.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { generateText } from "ai";
import OpenAI from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../support/plans";
import { ADMIN_KEY, useTestStack } from "../support/stack";

/** The local stack, started once; its scripted LLM reset before each test. */
const t = useTestStack();
let goals = 0;

const PLAN = [call(0, "llm_generate", { prompt: "Say it." }, ["final_answer"])];
const ANSWER = "Said once.";

/** Holds the scripted model's answer until `release` is called. */
function hold() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  t.llm.streaming = {
    beforeChunk: (_i, _text, request) => (request.schemaName === "text" ? released : undefined),
  };
  t.llm.on("text", ANSWER);
  return release;
}

/** A `fetch` that counts the requests an SDK sends, and calls `onSend` with each one's number. */
function counting(onSend: (n: number) => void = () => {}) {
  let sent = 0;
  const fetcher = (input: RequestInfo | URL, init?: RequestInit) => {
    sent += 1;
    onSend(sent);
    return fetch(input, init);
  };
  return { fetch: fetcher as typeof fetch, sent: () => sent };
}

/** Resolves once `check` answers true (checked every 50 ms, for up to 20 s). */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the run did not end in 20 s");
}

/** A goal no other test uses, so that its tasks can be counted. */
function goal(): string {
  goals += 1;
  return `Count the tasks of call ${goals}.`;
}

/** The tasks the goal started. */
async function tasksOf(text: string): Promise<{ task_id: string; status: string }[]> {
  const list = await t.api("GET", "/v1/tasks?limit=100");
  return list.body.tasks.filter((x: { goal: string }) => x.goal === text);
}

const sdks = {
  openai: (text: string) =>
    new OpenAI({ apiKey: t.apiKey, baseURL: `${t.url}/v1` }).chat.completions.create({
      model: "default",
      messages: [{ role: "user", content: text }],
    }),
  ai: (text: string) =>
    generateText({
      model: createOpenAICompatible({ name: "stackvm", baseURL: `${t.url}/v1`, apiKey: t.apiKey })(
        "default",
      ),
      prompt: text,
    }),
  langchain: (text: string) =>
    new ChatOpenAI({
      model: "default",
      apiKey: t.apiKey,
      configuration: { baseURL: `${t.url}/v1` },
    }).invoke(text),
};

beforeEach(() => {
  t.llm.on("plan", { reasoning: "one step writes the answer", plan: PLAN });
});

describe("a run that fails, with each SDK at its defaults", () => {
  for (const [name, run] of Object.entries(sdks)) {
    it(`answers ${name} a failed run once, in one task, with an error it does not retry`, async () => {
      t.llm.on("text", { fault: "status", status: 401, message: "scripted: key revoked" });
      const text = goal();
      const error = await run(text).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).not.toBeNull();
      expect(String((error as Error).message)).toMatch(/failed/);
      const tasks = await tasksOf(text);
      expect(tasks.map((x) => x.status)).toEqual(["failed"]);
    }, 120_000);
  }
});

describe("a retry while the run goes on", () => {
  it("answers openai's retry after a timeout with the same run (x-stainless-retry-count)", async () => {
    const release = hold();
    const counter = counting((n) => {
      if (n === 2) release();
    });
    const text = goal();
    const client = new OpenAI({
      apiKey: t.apiKey,
      baseURL: `${t.url}/v1`,
      timeout: 1_500,
      fetch: counter.fetch,
    });
    const done = await client.chat.completions.create({
      model: "default",
      messages: [{ role: "user", content: text }],
    });
    expect(done.choices[0]?.message.content).toBe(ANSWER);
    expect(counter.sent()).toBeGreaterThanOrEqual(2);
    expect((await tasksOf(text)).map((x) => x.status)).toEqual(["completed"]);
  }, 60_000);

  it("answers LangChain's retry after a timeout (no retry header) with the run still going", async () => {
    const release = hold();
    const counter = counting((n) => {
      // The second request reaches the run before it ends: the model answers a moment later.
      if (n === 2) setTimeout(release, 1_000);
    });
    const text = goal();
    const model = new ChatOpenAI({
      model: "default",
      apiKey: t.apiKey,
      timeout: 1_500,
      configuration: { baseURL: `${t.url}/v1`, fetch: counter.fetch },
    });
    const done = await model.invoke(text);
    expect(done.content).toBe(ANSWER);
    expect(counter.sent()).toBeGreaterThanOrEqual(2);
    expect((await tasksOf(text)).map((x) => x.status)).toEqual(["completed"]);
  }, 60_000);

  it("answers LangChain's try sent after the run ended, when no earlier try was answered, with that run", async () => {
    const release = hold();
    const text = goal();
    let sent = 0;
    // Each try times out; the third is sent only once the run has ended, as happens
    // when the model answers between LangChain's second timeout and its next try.
    const fetcher = async (input: RequestInfo | URL, init?: RequestInit) => {
      sent += 1;
      if (sent === 3) {
        release();
        await until(async () => (await tasksOf(text))[0]?.status === "completed");
      }
      return fetch(input, init);
    };
    const model = new ChatOpenAI({
      model: "default",
      apiKey: t.apiKey,
      timeout: 1_000,
      configuration: { baseURL: `${t.url}/v1`, fetch: fetcher as typeof fetch },
    });
    const done = await model.invoke(text);
    expect(done.content).toBe(ANSWER);
    expect(sent).toBeGreaterThanOrEqual(3);
    expect((await tasksOf(text)).map((x) => x.status)).toEqual(["completed"]);
  }, 60_000);

  it("answers the AI SDK's retries of a run that waits for a person (409) with the same run", async () => {
    t.llm.on("plan", {
      reasoning: "ask first",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "ask_human",
            tool_params: { question: "Ship it?", schema: { type: "boolean" } },
            output_vars: "approved",
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${approved}" } },
      ],
    });
    const counter = counting();
    const text = goal();
    const error = await generateText({
      model: createOpenAICompatible({
        name: "stackvm",
        baseURL: `${t.url}/v1`,
        apiKey: t.apiKey,
        fetch: counter.fetch,
      })("default"),
      prompt: text,
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/waits for a person/);
    // The AI SDK retries a 409 twice: each retry found the run it started.
    expect(counter.sent()).toBe(3);
    expect((await tasksOf(text)).map((x) => x.status)).toEqual(["waiting"]);
  }, 60_000);
});

describe("the same request sent again", () => {
  const body = (text: string) => ({
    model: "default",
    messages: [{ role: "user", content: text }],
  });

  beforeEach(() => {
    t.llm.on("text", ANSWER);
  });

  it("answers the same Idempotency-Key and body with the same run, and another body with 409", async () => {
    const text = goal();
    const headers = { "idempotency-key": `k-${text}` };
    const first = await t.api("POST", "/v1/chat/completions", body(text), { headers });
    const again = await t.api("POST", "/v1/chat/completions", body(text), { headers });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get("x-stackvm-task-id")).toBe(first.headers.get("x-stackvm-task-id"));
    expect(again.body.choices[0].message.content).toBe(ANSWER);
    const other = await t.api("POST", "/v1/chat/completions", body(`${text} Other.`), { headers });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: "idempotency_key_reused",
      type: "invalid_request_error",
    });
    expect(await tasksOf(text)).toHaveLength(1);
    expect(await tasksOf(`${text} Other.`)).toHaveLength(0);
  });

  it("starts a new run for a request sent again after its run ended, with no retry header", async () => {
    const text = goal();
    const first = await t.api("POST", "/v1/chat/completions", body(text));
    const again = await t.api("POST", "/v1/chat/completions", body(text));
    expect(again.headers.get("x-stackvm-task-id")).not.toBe(first.headers.get("x-stackvm-task-id"));
    expect(await tasksOf(text)).toHaveLength(2);
    // openai's retry of the same body answers the run that ended.
    const retried = await t.api("POST", "/v1/chat/completions", body(text), {
      headers: { "x-stainless-retry-count": "1" },
    });
    expect(retried.headers.get("x-stackvm-task-id")).toBe(again.headers.get("x-stackvm-task-id"));
    expect(await tasksOf(text)).toHaveLength(2);
  });

  it("refuses another tenant a run by sending the same body as a retry", async () => {
    const made = await t.api(
      "POST",
      "/v1/admin/tenants/copycat/keys",
      { name: "c" },
      { key: ADMIN_KEY },
    );
    expect(made.status).toBe(201);
    const text = goal();
    const first = await t.api("POST", "/v1/chat/completions", body(text));
    const copy = await t.api("POST", "/v1/chat/completions", body(text), {
      key: made.body.key,
      headers: { "x-stainless-retry-count": "1", "idempotency-key": "shared" },
    });
    const copyToo = await t.api("POST", "/v1/chat/completions", body(text), {
      key: made.body.key,
      headers: { "x-stainless-retry-count": "2" },
    });
    const mine = first.headers.get("x-stackvm-task-id");
    expect(copy.status).toBe(200);
    expect(copy.headers.get("x-stackvm-task-id")).not.toBe(mine);
    expect(copyToo.headers.get("x-stackvm-task-id")).not.toBe(mine);
    const theirs = await t.api("GET", `/v1/tasks/${mine}`, undefined, { key: made.body.key });
    expect(theirs.status).toBe(404);
  });

  it("refuses an Idempotency-Key longer than 255 characters, starting nothing", async () => {
    const text = goal();
    const long = await t.api("POST", "/v1/chat/completions", body(text), {
      headers: { "idempotency-key": "k".repeat(256) },
    });
    expect(long.status).toBe(400);
    expect(long.body.error.type).toBe("invalid_request_error");
    expect(await tasksOf(text)).toHaveLength(0);
  });
});

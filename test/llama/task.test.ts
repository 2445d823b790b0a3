/**
 * The whole local stack against a real llama.cpp server, as a user with a local
 * model runs it (`OPENAI_BASE_URL` at llama-server): a goal goes through the real
 * planner (its streamed structured output), a plan's `llm_generate` asks with a
 * JSON Schema format, and `GET /v1/doctor` checks the model and the embeddings.
 *
 * The tiny model's answers are noise, so no plan it writes is valid: the tests
 * assert that the server took every request the stack sent and how the stack
 * reads what came back, never the answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  LLAMA_START_TIMEOUT_MS,
  type LlamaServer,
  startLlamaServer,
} from "../support/llama-server";
import { call, finish } from "../support/plans";
import { startTestStack, type TestStack } from "../support/stack";

type Json = Record<string, any>;

let llama: LlamaServer;
let t: TestStack;
beforeAll(async () => {
  // The tiny model's vocabulary spends a token per character: the planner's prompt
  // is some 10,000 tokens. The server's own cap (-n) bounds answers sent without
  // max_tokens; the stack sends its own (2,048 for a plan), which llama.cpp obeys
  // instead, so LLM_MAX_OUTPUT_TOKENS caps them too: noise is noise at 48 tokens,
  // and writing 2,048 of it a call at one thread was most of this file's minute.
  llama = await startLlamaServer({
    contextSize: 16384,
    embeddings: true,
    maxOutputTokens: 48,
  });
  t = await startTestStack({
    env: {
      OPENAI_BASE_URL: llama.url,
      OPENAI_API_KEY: "none",
      LLM_MODEL: llama.model,
      EMBEDDING_MODEL: llama.model,
      // A loaded machine runs many test files beside this one.
      LLM_TIMEOUT_MS: "60000",
      LLM_REPAIR_ROUNDS: "1",
      LLM_MAX_OUTPUT_TOKENS: "plan=48,plan_update=48,generate=48",
    },
  });
}, LLAMA_START_TIMEOUT_MS);
afterAll(async () => {
  await t?.stop();
  await llama?.stop();
});

async function commitsOf(taskId: string): Promise<Json[]> {
  const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=100`);
  return (body.commits as Json[]).reverse();
}

async function run(body: Json) {
  const created = await t.api("POST", "/v1/tasks", body);
  expect(created.status).toBe(202);
  const taskId = created.body.task_id as string;
  const task = await t.waitForTask(taskId, { timeoutMs: 120_000 });
  return { taskId, task, commits: await commitsOf(taskId) };
}

/** What the stack may make of noise: never a refusal by the server, never "unreachable". */
const NOISE_CODES = [
  "plan_invalid",
  "llm_invalid_json",
  "llm_invalid_output",
  "llm_output_cut_off",
];

describe("the local stack on a real llama.cpp server", { timeout: 180_000 }, () => {
  it("sends the planner's requests to the server, which takes each of them", async () => {
    const { task, commits } = await run({ goal: "List three fruits." });

    expect(task.status).toBe("failed");
    const calls = commits.flatMap((c) => (c.llm_calls ?? []) as Json[]);
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) {
      expect(c).toMatchObject({ purpose: "plan", model: llama.model });
      // An answer the server could read reports its usage; one it could not (its
      // structured answer stopped at the cap) is on record with that error.
      if (c.error) expect(NOISE_CODES).toContain(c.error.code);
      else expect(c.input_tokens).toBeGreaterThan(500);
    }
    const codes = commits.map((c) => c.error?.code).filter(Boolean);
    expect(codes.length).toBeGreaterThan(0);
    for (const code of codes) expect(NOISE_CODES).toContain(code);
  });

  it("asks llm_generate's JSON Schema format of the server and reads the answer", async () => {
    const schema = {
      type: "object",
      properties: { fruit: { type: "string" }, count: { type: "integer" } },
      required: ["fruit", "count"],
      additionalProperties: false,
    };
    const { task, commits } = await run({
      plan: [
        call(0, "llm_generate", { prompt: "Name a fruit.", response_format: { schema } }, [
          "answer",
        ]),
        finish(1, "${answer}"),
      ],
    });

    const step = commits.find((c) => c.seq_no === 0) as Json;
    expect(step.llm_calls?.length).toBeGreaterThan(0);
    expect(step.llm_calls[0]).toMatchObject({ purpose: "llm_generate", model: llama.model });
    if (step.llm_calls[0].error) expect(NOISE_CODES).toContain(step.llm_calls[0].error.code);
    else expect(step.llm_calls[0].input_tokens).toBeGreaterThan(20);
    if (task.status === "completed") {
      expect(typeof task.final_answer).toBe("object");
    } else {
      expect(NOISE_CODES).toContain(step.error?.code);
    }
  });

  it("passes the doctor's model and embeddings checks", async () => {
    const { status, body } = await t.api("GET", "/v1/doctor");
    expect(status).toBe(200);
    const checks = body.checks as Json[];
    const llm = checks.find((c) => c.name === "llm");
    expect(llm).toMatchObject({ status: "ok", fix: null });
    expect(llm?.detail).toContain(llama.url);
    expect(checks.find((c) => c.name === "embeddings")).toMatchObject({
      status: "ok",
      detail: `model ${llama.model} answered at ${llama.url} (128 dimensions)`,
    });
  });
});

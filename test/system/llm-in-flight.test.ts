/**
 * While the model thinks, the task shows the call in flight (issue 25, item 5):
 * through the local stack and the scripted LLM, an answer held mid-stream shows
 * on `GET /v1/tasks/{id}` and on its branch as `llm_call` with its purpose, model,
 * attempt, start and the pieces received so far (and once on the events stream,
 * as `event: llm_call`); a slow call that does not
 * stream shows too; both are gone once the step commits.
 */
import { describe, expect, it } from "vitest";
import { readSse } from "../support/sse";
import { useTestStack } from "../support/stack";

const t = useTestStack();

const PLAN = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Say hi" },
      output_vars: ["hi"],
    },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${hi}" } },
];

async function until(taskId: string, ok: (task: any) => boolean): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { body } = await t.api("GET", `/v1/tasks/${taskId}`);
    if (ok(body)) return body;
    if (Date.now() > deadline) throw new Error(`never reached: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the call in flight", () => {
  it("shows a streamed answer's purpose, attempt and pieces so far, and is gone once committed", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    t.llm.streaming = {
      chunkChars: 4,
      beforeChunk: async (index) => {
        if (index === 3) await held;
      },
    };
    t.llm.on("text", "Hello there, how are you today?");
    const created = await t.api("POST", "/v1/tasks", { plan: PLAN });
    expect(created.status).toBe(202);
    const taskId = created.body.task_id as string;
    try {
      const thinking = await until(taskId, (task) => (task.llm_call?.tokens_so_far ?? 0) > 0);
      expect(thinking.status).toBe("running");
      expect(thinking.llm_call).toMatchObject({
        purpose: "llm_generate",
        model: "scripted-model",
        attempt: 1,
      });
      expect(thinking.llm_call.elapsed_ms).toBeGreaterThanOrEqual(0);
      expect(Date.parse(thinking.llm_call.started_at)).not.toBeNaN();
      const main = await t.api("GET", `/v1/tasks/${taskId}/branches/main`);
      expect(main.body.llm_call).toMatchObject({ purpose: "llm_generate", attempt: 1 });
      // The events stream says so too, once per attempt.
      const read = await readSse(`${t.url}/v1/tasks/${taskId}/events`, t.apiKey, {
        until: (events) => events.some((e) => e.event === "llm_call"),
      });
      const calls = read.events.filter((e) => e.event === "llm_call");
      expect(calls).toHaveLength(1);
      expect(JSON.parse(calls[0]!.data)).toMatchObject({
        branch: "main",
        purpose: "llm_generate",
        model: "scripted-model",
        attempt: 1,
      });
    } finally {
      release();
    }
    const done = await t.waitForTask(taskId);
    expect(done).toMatchObject({
      status: "completed",
      final_answer: "Hello there, how are you today?",
    });
    expect(done.llm_call).toBeUndefined();
    const main = await t.api("GET", `/v1/tasks/${taskId}/branches/main`);
    expect(main.body.llm_call).toBeUndefined();
  });

  it("shows the planner's call while a slow model writes the plan", async () => {
    t.llm.queue("plan", { fault: "slow", ms: 1_500, answer: { reasoning: "r", plan: PLAN } });
    t.llm.on("text", "hi");
    const created = await t.api("POST", "/v1/tasks", { goal: "Say hi" });
    const taskId = created.body.task_id as string;
    const planning = await until(taskId, (task) => task.llm_call !== undefined);
    expect(planning.llm_call).toMatchObject({ purpose: "plan", attempt: 1 });
    expect(planning.usage.llm_calls).toBe(0);
    expect((await t.waitForTask(taskId)).status).toBe("completed");
  });
});

import { describe, expect, it } from "vitest";
import type { Plan } from "../plan/schema";
import type { LlmRequest } from "../ports/llm";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import type { StepMessage } from "../vm/message";
import { runStep } from "../vm/step";
import { LlmTraceService } from "./llm-traces";
import { CreateTaskInput } from "./task-input";

const plan: Plan = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Name a temple in Kyoto." },
      output_vars: ["temple"],
    },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${temple}" } },
];

const DAY = 86_400_000;

async function run(traces: number) {
  const llm = new FakeLlm(() => "Kinkaku-ji");
  const sys = memorySystem({ llm, traces });
  const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
  await sys.drain();
  const { commits } = await sys.branches.commits("acme", task.task_id, "main", 100, null);
  const step = commits.find((c) => c.seq_no === 0 && c.type === "step")!;
  return { sys, llm, taskId: task.task_id, step };
}

describe("LlmTraceService", () => {
  it("reads a step's call as the model got it, until the retention has passed", async () => {
    const { sys, llm, taskId, step } = await run(30);
    const sent = llm.requests[0] as LlmRequest;
    const trace = await sys.llmTraces.read("acme", taskId, step.commit_id, 0);
    expect(trace).toMatchObject({
      commit_id: step.commit_id,
      n: 0,
      purpose: "llm_generate",
      model: "test-model",
      request: { model: "test-model", messages: sent.messages },
      response: { text: "Kinkaku-ji", finish_reason: null },
      attempts: [{ attempt: 1 }],
    });
    sys.clock.advance(29 * DAY);
    await expect(sys.llmTraces.read("acme", taskId, step.commit_id, 0)).resolves.toBeTruthy();
    sys.clock.advance(DAY);
    await expect(sys.llmTraces.read("acme", taskId, step.commit_id, 0)).rejects.toMatchObject({
      kind: "not_found",
      code: "llm_trace_expired",
      message: expect.stringContaining("kept 30 day(s)"),
    });
  });

  it("says which part is missing: the task, the commit, the call", async () => {
    const { sys, taskId, step } = await run(30);
    await expect(sys.llmTraces.read("other", taskId, step.commit_id, 0)).rejects.toMatchObject({
      kind: "not_found",
      message: `task '${taskId}' does not exist`,
    });
    await expect(sys.llmTraces.read("acme", taskId, "nope-1", 0)).rejects.toMatchObject({
      kind: "not_found",
      message: "commit 'nope-1' does not exist",
    });
    await expect(sys.llmTraces.read("acme", taskId, step.commit_id, 1)).rejects.toMatchObject({
      code: "llm_call_not_found",
      message: `commit ${step.commit_id} made 1 LLM call(s): n goes from 0 to 0`,
    });
  });

  it("answers a trace kept before traces were turned off as no longer kept", async () => {
    const { sys, taskId, step } = await run(30);
    const off = new LlmTraceService({ ...sys, retentionDays: 0 });
    await expect(off.read("acme", taskId, step.commit_id, 0)).rejects.toMatchObject({
      code: "llm_trace_expired",
      message: expect.stringContaining("no longer kept (STACKVM_LLM_TRACE_RETENTION_DAYS=0)"),
    });
  });

  it("keeps none when traces are off, and says so", async () => {
    const { sys, taskId, step } = await run(0);
    expect(step.llm_calls[0]!.trace).toBeUndefined();
    await expect(sys.llmTraces.read("acme", taskId, step.commit_id, 0)).rejects.toMatchObject({
      code: "llm_trace_not_kept",
      message: expect.stringContaining("STACKVM_LLM_TRACE_RETENTION_DAYS=0"),
    });
  });

  it("costs the step no item read or write: the same store calls with traces as without", async () => {
    const off = await run(0);
    const on = await run(30);
    expect(on.sys.items.counts).toEqual(off.sys.items.counts);
    const traces = on.sys.blobs.keys().filter((k) => k.key.startsWith(`llm/acme/${on.taskId}/`));
    expect(traces).toHaveLength(1);
  });

  it("makes no second call nor trace for a step message delivered again", async () => {
    const { sys, llm, taskId, step } = await run(30);
    const traces = () => sys.blobs.keys().filter((k) => k.key.startsWith(`llm/acme/${taskId}/`));
    const calls = llm.requests.length;
    const again = sys.queue.sent
      .map((s) => s.body as StepMessage)
      .find((m) => m.head === step.parent_id)!;
    expect((await runStep(sys.step, again)).outcome).toBe("duplicate");
    expect(llm.requests).toHaveLength(calls);
    expect(traces()).toHaveLength(1);
    const trace = await sys.llmTraces.read("acme", taskId, step.commit_id, 0);
    expect(trace.response.text).toBe("Kinkaku-ji");
  });

  it("deletes a task's traces with the task", async () => {
    const { sys, taskId } = await run(30);
    await sys.tasks.delete("acme", taskId);
    expect(sys.blobs.keys().filter((k) => k.key.startsWith("llm/"))).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import type { LlmRequest } from "../ports/llm";
import { silentLog } from "../ports/log";
import type { BranchRecord } from "../store/records";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { StepMessage } from "../vm/message";
import { runStep } from "../vm/step";
import { bestJudged, createEvaluator, evaluationHook } from "./evaluation";
import { taskLifecycle } from "./lifecycle";
import { CreateTaskInput } from "./task-input";

const schemaOf = (r: LlmRequest) => r.jsonSchema?.name ?? "text";

/** A system whose planner writes a one-step plan answering `answer-{n}` on the n-th plan. */
function judgedSystem(
  verdicts: Array<{ accept: boolean; score: number }>,
  ended: Array<{ branch: string; status: string }> = [],
) {
  let plans = 0;
  let judged = 0;
  const llm = new FakeLlm((request) => {
    const schema = schemaOf(request);
    if (schema === "plan" || schema === "plan_update") {
      plans++;
      return JSON.stringify({
        reasoning: "r",
        resume_at: 0,
        plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: `answer-${plans}` } }],
      });
    }
    if (schema === "evaluation") {
      const v = verdicts[judged++] ?? { accept: true, score: 10 };
      return JSON.stringify({
        ...v,
        suggestion: v.accept ? "" : `do better than round ${judged}`,
        explanation: "because",
      });
    }
    return "text";
  });
  const sys = memorySystem({ llm });
  sys.step.evaluator = createEvaluator();
  // Records, as a webhook hook would, the task ending on its result branch.
  const endOfTask = async (branch: BranchRecord) => {
    const task = await sys.store.getTask(branch.tenant_id, branch.task_id);
    if (task?.branch === branch.name && ["completed", "failed"].includes(task.status)) {
      ended.push({ branch: branch.name, status: task.status });
    }
  };
  const lifecycle = taskLifecycle(sys.store, sys.clock, {
    evaluation: evaluationHook({
      store: sys.store,
      branches: sys.branches,
      log: silentLog,
      onTaskEnd: (branch) => lifecycle.onTerminal(branch),
    }),
    afterTerminal: [endOfTask],
  });
  sys.step.onTerminal = lifecycle.onTerminal;
  return sys;
}

async function startEvaluated(sys: ReturnType<typeof judgedSystem>) {
  const input = CreateTaskInput.parse({ goal: "Name a colour.", evaluate: true });
  return (await sys.tasks.create("acme", input)).task.task_id;
}

describe("evaluation", () => {
  it("writes an evaluation commit that keeps the answer and ends an accepted branch", async () => {
    const sys = judgedSystem([{ accept: true, score: 9 }]);
    const taskId = await startEvaluated(sys);
    await sys.drain();
    const task = await sys.tasks.get("acme", taskId);
    expect(task).toMatchObject({ status: "completed", branch: "main", final_answer: "answer-1" });
    const { commits } = await sys.branches.commits("acme", taskId, "main", 10, null);
    expect(commits.map((c) => c.type)).toEqual(["evaluation", "step", "plan"]);
    expect(commits[0]!.details).toMatchObject({ verdict: { accept: true, score: 9 }, round: 0 });
    expect(commits[0]!.llm_calls.map((c) => c.purpose)).toEqual(["evaluation"]);
    expect((await sys.tasks.list("acme", { limit: 5 })).tasks).toHaveLength(1);
  });

  it("tells the judge the goal, the response language and the answer", async () => {
    const sys = judgedSystem([{ accept: true, score: 9 }]);
    const input = CreateTaskInput.parse({
      goal: "Name a colour.",
      evaluate: true,
      response_format: { lang: "French" },
    });
    await sys.tasks.create("acme", input);
    await sys.drain();
    const judge = sys.llm.requests.find((r) => schemaOf(r) === "evaluation")!;
    const prompt = judge.messages.map((m) => m.content).join("\n");
    expect(prompt).toContain("Name a colour.");
    expect(prompt).toContain("French");
    expect(prompt).toContain("answer-1");
  });

  it("forks a new attempt after a rejection and promotes the better answer", async () => {
    const ended: Array<{ branch: string; status: string }> = [];
    const sys = judgedSystem(
      [
        { accept: false, score: 3 },
        { accept: true, score: 8 },
      ],
      ended,
    );
    const taskId = await startEvaluated(sys);
    await sys.drain();
    const task = await sys.tasks.get("acme", taskId);
    expect(task).toMatchObject({ status: "completed", branch: "eval-1", final_answer: "answer-2" });
    const branches = await sys.branches.list("acme", taskId);
    expect(branches.map((b) => b.name).sort()).toEqual(["eval-1", "main"]);
    const update = sys.llm.requests.find((r) => schemaOf(r) === "plan_update")!;
    expect(update.messages.at(-1)!.content).toContain("do better than round 1");
    expect(ended).toEqual([{ branch: "eval-1", status: "completed" }]);
  });

  it("stops after two rounds and keeps the best judged answer", async () => {
    const ended: Array<{ branch: string; status: string }> = [];
    const sys = judgedSystem(
      [
        { accept: false, score: 2 },
        { accept: false, score: 6 },
        { accept: false, score: 4 },
      ],
      ended,
    );
    const taskId = await startEvaluated(sys);
    await sys.drain();
    const task = await sys.tasks.get("acme", taskId);
    expect(task).toMatchObject({ status: "completed", branch: "eval-1", final_answer: "answer-2" });
    const names = (await sys.branches.list("acme", taskId)).map((b) => b.name);
    expect(names.sort()).toEqual(["eval-1", "eval-2", "main"]);
    expect(sys.llm.requests.filter((r) => schemaOf(r) === "evaluation")).toHaveLength(3);
    // The task ended on eval-1 although eval-2 ended last: the hooks saw it once.
    expect(ended).toEqual([{ branch: "eval-1", status: "completed" }]);
  });

  it("shows the task running while a rejected answer waits for its new attempt", async () => {
    const sys = judgedSystem([
      { accept: false, score: 3 },
      { accept: true, score: 8 },
    ]);
    const taskId = await startEvaluated(sys);
    // plan, step, evaluation of main: main is completed and rejected, eval-1 not yet run.
    for (let i = 0; i < 3; i++) {
      const [message] = await sys.queue.receive(1);
      await runStep(sys.step, StepMessage.parse(JSON.parse(message!.body)));
      await sys.queue.delete(message!.receiptHandle);
    }
    const main = await sys.store.getBranch("acme", taskId, "main");
    expect(main).toMatchObject({ status: "completed", verdict: { accept: false } });
    expect((await sys.tasks.get("acme", taskId)).status).toBe("running");
    await sys.drain();
    expect((await sys.tasks.get("acme", taskId)).status).toBe("completed");
  });

  it("completes without a verdict when the judge cannot answer", async () => {
    const sys = judgedSystem([]);
    sys.llm.answer = (request) =>
      schemaOf(request) === "evaluation"
        ? "not json at all"
        : JSON.stringify({
            reasoning: "r",
            plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "x" } }],
          });
    const taskId = await startEvaluated(sys);
    await sys.drain();
    const task = await sys.tasks.get("acme", taskId);
    expect(task).toMatchObject({ status: "completed", final_answer: "x" });
    const { commits } = await sys.branches.commits("acme", taskId, "main", 1, null);
    expect(commits[0]).toMatchObject({ type: "evaluation", details: { verdict: null } });
    expect(commits[0]!.error).toMatchObject({
      message: expect.stringMatching(/could not be judged/),
    });
  });
});

describe("bestJudged", () => {
  const branch = (name: string, round: number, status: string, verdict: unknown) =>
    ({ name, status, verdict, config: { evaluation_round: round } }) as unknown as BranchRecord;

  it("prefers the highest score, then acceptance, then the earlier round", () => {
    expect(
      bestJudged([
        branch("main", 0, "completed", { accept: false, score: 5 }),
        branch("eval-1", 1, "completed", { accept: true, score: 5 }),
        branch("eval-2", 2, "failed", null),
      ])!.name,
    ).toBe("eval-1");
    expect(
      bestJudged([
        branch("main", 0, "completed", { accept: false, score: 5 }),
        branch("eval-1", 1, "completed", { accept: false, score: 5 }),
      ])!.name,
    ).toBe("main");
    expect(bestJudged([branch("main", 0, "failed", null)])).toBeNull();
  });
});

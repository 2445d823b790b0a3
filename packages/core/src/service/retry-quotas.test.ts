/**
 * Retries and forks are runs of their own for the quotas: each run's usage counts
 * for the month, a spent month refuses them as it refuses a new task, and a retry
 * of an ended task claims the task's running slot or waits in line for one.
 */
import { describe, expect, it } from "vitest";
import { integrateSystem } from "../testing/integrate-system";
import { CreateTaskInput } from "./task-input";

const answer = (text: string) => [
  { seq_no: 0, type: "assign", parameters: { final_answer: text } },
];
type Sys = ReturnType<typeof integrateSystem>;
const start = async (sys: Sys, text: string) =>
  (await sys.tasks.create("acme", CreateTaskInput.parse({ plan: answer(text) }))).task.task_id;

/** Spends tokens on a branch that has not ended, as its LLM calls would. */
const spend = (sys: Sys, taskId: string, branch: string, tokens: number) =>
  sys.store.updateBranch("acme", taskId, branch, {
    add: [
      [["usage", "input_tokens"], tokens],
      [["usage", "cost_usd"], tokens / 1000],
    ],
  });

describe("usage of every run", () => {
  it("adds a retry's and a fork's usage to the month when they end, each once", async () => {
    const sys = integrateSystem();
    const taskId = await start(sys, "a");
    await spend(sys, taskId, "main", 10);
    await sys.drain();
    expect(await sys.quotas.usage("acme")).toMatchObject({ tokens: 10 });

    const { branch: retried } = await sys.retries.retry("acme", taskId, { from: "start" });
    await spend(sys, taskId, retried.name, 7);
    await sys.drain();
    expect(await sys.quotas.usage("acme")).toMatchObject({ tokens: 17, cost_usd: 0.017 });

    const [root] = (
      await sys.branches.commits("acme", taskId, retried.name, 10, null)
    ).commits.slice(-1);
    const fork = await sys.branches.fork("acme", taskId, { from_commit: root!.commit_id });
    await spend(sys, taskId, fork.name, 5);
    await sys.drain();
    expect((await sys.store.getBranch("acme", taskId, fork.name))?.status).toBe("completed");
    // The branch-end hook run again (delivered twice) counts nothing more.
    await sys.quotas.recordUsage("acme", taskId, fork.name);
    expect(await sys.quotas.usage("acme")).toMatchObject({ tokens: 22 });
    expect((await sys.tasks.get("acme", taskId)).usage.input_tokens).toBe(22);
  });
});

describe("a spent month", () => {
  it("refuses a retry and a fork with the error a new task gets, and leaves nothing behind", async () => {
    const sys = integrateSystem({ quotas: { monthly_token_budget: 20 } });
    const taskId = await start(sys, "a");
    await spend(sys, taskId, "main", 25);
    await sys.drain();
    const before = await sys.tasks.get("acme", taskId);
    const newTask = await start(sys, "b").catch((e: unknown) => e);
    expect(newTask).toMatchObject({ kind: "rate_limited", code: "monthly_budget_exhausted" });
    const refused = await sys.retries
      .retry("acme", taskId, { from: "start" })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: "rate_limited", code: "monthly_budget_exhausted" });
    expect((refused as Error).message).toContain("monthly budget of this tenant is spent");
    const root = (await sys.branches.commits("acme", taskId, "main", 10, null)).commits.at(-1);
    const fork = await sys.branches
      .fork("acme", taskId, { from_commit: root!.commit_id })
      .catch((e: unknown) => e);
    expect(fork).toMatchObject({ code: "monthly_budget_exhausted" });
    expect((await sys.store.listBranches("acme", taskId)).map((b) => b.name)).toEqual(["main"]);
    expect(await sys.tasks.get("acme", taskId)).toEqual(before);
  });

  it("caps a retry's budget at what the month has left", async () => {
    const sys = integrateSystem({ quotas: { monthly_token_budget: 20 } });
    const taskId = await start(sys, "a");
    await spend(sys, taskId, "main", 12);
    await sys.drain();
    const { branch } = await sys.retries.retry("acme", taskId, { from: "start" });
    const record = await sys.store.getBranch("acme", taskId, branch.name);
    expect(record?.config.budget.max_tokens).toBe(8);
  });
});

describe("a retry and the running slots", () => {
  it("waits in line when every slot is taken, says so in the task and its list row, then runs and frees the slot", async () => {
    const sys = integrateSystem({ quotas: { max_running_tasks: 1 } });
    const a = await start(sys, "a");
    await sys.drain();
    const b = await start(sys, "b");
    const { branch } = await sys.retries.retry("acme", a, { from: "start" });
    expect(branch.status).toBe("queued");
    const waiting = await sys.tasks.get("acme", a);
    expect(waiting).toMatchObject({ status: "queued", branch: branch.name });
    expect(waiting.waiting_for_slot).toEqual({ position: 1, max_running_tasks: 1 });
    const listed = await sys.tasks.list("acme", { limit: 10 });
    const row = listed.tasks.find((t) => t.task_id === a);
    expect(row?.waiting_for_slot).toEqual({ position: 1, max_running_tasks: 1 });
    expect(listed.tasks.find((t) => t.task_id === b)?.waiting_for_slot).toBeUndefined();

    await sys.drain();
    expect(await sys.tasks.get("acme", b)).toMatchObject({ status: "completed" });
    const done = await sys.tasks.get("acme", a);
    expect(done).toMatchObject({ status: "completed", branch: branch.name, final_answer: "a" });
    expect((await sys.store.getTask("acme", a))?.status).toBe("completed");
    // The retry's slot was freed when it ended: a new task runs at once.
    const c = await start(sys, "c");
    expect((await sys.store.getBranch("acme", c, "main"))?.status).toBe("running");
  });

  it("takes a free slot at once, so that a new task waits behind it", async () => {
    const sys = integrateSystem({ quotas: { max_running_tasks: 1 } });
    const a = await start(sys, "a");
    await sys.drain();
    const { branch } = await sys.retries.retry("acme", a, { from: "start" });
    expect(branch.status).toBe("running");
    const b = await start(sys, "b");
    expect((await sys.tasks.get("acme", b)).waiting_for_slot).toEqual({
      position: 1,
      max_running_tasks: 1,
    });
    await sys.drain();
    for (const id of [a, b]) expect((await sys.tasks.get("acme", id)).status).toBe("completed");
  });
});

describe("a retry from the last commit of a completed task", () => {
  it("answers 422 nothing_to_run saying to retry from the start or fork an earlier commit", async () => {
    const sys = integrateSystem();
    const taskId = await start(sys, "a");
    await sys.drain();
    const refused = await sys.retries
      .retry("acme", taskId, { from: "last_commit" })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: "invalid", code: "nothing_to_run" });
    const message = (refused as Error).message;
    expect(message).toContain('"from": "start"');
    expect(message).toContain("fork an earlier commit");
    expect((await sys.store.listBranches("acme", taskId)).map((b) => b.name)).toEqual(["main"]);
  });
});

describe("usage of a run deleted before it ended", () => {
  it("counts a deleted fork's and a deleted task's tokens for the month", async () => {
    const sys = integrateSystem();
    const taskId = await start(sys, "a");
    await sys.drain();
    const root = (await sys.branches.commits("acme", taskId, "main", 10, null)).commits.at(-1);
    const fork = await sys.branches.fork("acme", taskId, { from_commit: root!.commit_id });
    await spend(sys, taskId, fork.name, 4);
    await sys.branches.delete("acme", taskId, fork.name);
    expect(await sys.quotas.usage("acme")).toMatchObject({ tokens: 4 });

    const running = await start(sys, "b");
    await spend(sys, running, "main", 6);
    await sys.tasks.delete("acme", running);
    await sys.drain();
    expect(await sys.quotas.usage("acme")).toMatchObject({ tokens: 10 });
  });
});

/**
 * Retention against the whole local stack (dynalite, the S3 emulator): a
 * tenant's finished tasks are deleted with their branches, commits, blobs and
 * LLM traces once their days are past, while a kept task, a task that runs or
 * waits again, and another tenant's task holding the same bytes stay; and a
 * deletion cut short is finished by the next sweep.
 */
import { LLM_TRACE_ROOT, silentLog, taskBlobPrefix } from "@stackvm/core";
import { describe, expect, it } from "vitest";
// The class itself: the stack builds its own on first use, behind a port that shows no internals.
import { Retention, type RetentionDeps } from "../../packages/core/src/service/retention";
import { ADMIN_KEY, useTestStack } from "../support/stack";

/** The stack's clock, moved forward by the test (never backward). */
let offsetMs = 0;
const t = useTestStack({ clock: { now: () => Date.now() + offsetMs } });

/** What the stack's own sweep is built from (`wiring/step-services.ts`), for a sweep of the test's. */
const retentionDeps = () => {
  const system = t.stack.system;
  return {
    store: system.store,
    expiries: system.stores.expiries,
    blobs: system.ports.blobs,
    clock: system.ports.clock,
    log: silentLog,
    tenantDays: async (tenant: string) => (await system.quotas.limits(tenant)).retention_days,
  } satisfies RetentionDeps;
};

const BIG = "otter ".repeat(30_000); // over the item limit: stored as a blob
const PLAN = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Write a lot" },
      output_vars: ["x"],
    },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
];
const WAITS = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "ask_human",
      tool_params: { question: "Ship it?", schema: { type: "boolean" } },
      output_vars: "ok",
    },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${ok}" } },
];

async function tenant(name: string, quotas: Record<string, unknown>): Promise<string> {
  const made = await t.api(
    "POST",
    `/v1/admin/tenants/${name}/keys`,
    { name: "ci" },
    { key: ADMIN_KEY },
  );
  expect(made.status).toBe(201);
  const set = await t.api("PUT", `/v1/admin/tenants/${name}/quotas`, quotas, { key: ADMIN_KEY });
  expect(set.status).toBe(200);
  return made.body.key;
}

async function finished(key: string, body: Record<string, unknown>): Promise<string> {
  const created = await t.api("POST", "/v1/tasks", body, { key });
  expect(created.status).toBe(202);
  expect((await t.waitForTask(created.body.task_id, { key })).status).toBe("completed");
  return created.body.task_id;
}

async function waiting(key: string): Promise<string> {
  const created = await t.api("POST", "/v1/tasks", { plan: WAITS }, { key });
  for (let i = 0; i < 400; i++) {
    const task = await t.api("GET", `/v1/tasks/${created.body.task_id}`, undefined, { key });
    if (task.body.status === "waiting") return created.body.task_id;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the task did not wait");
}

const items = () => t.stack.system.ports.items;
const blobs = () => t.stack.system.ports.blobs;
const itemsOf = async (tenantId: string, taskId: string) =>
  (await items().query({ pk: `T#${tenantId}#K#${taskId}` })).items;
/** The task's expiry marker, once the hooks that run after its end (after its status) wrote it. */
async function marked(tenantId: string, taskId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await itemsOf(tenantId, taskId)).some((item) => item.sk === "EXPIRES")) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`task ${taskId} got no expiry marker`);
}
const blobShas = (stored: unknown[]) => [
  ...new Set([...JSON.stringify(stored).matchAll(/"\$blob":"([0-9a-f]{64})"/g)].map((m) => m[1]!)),
];

describe("retention", () => {
  it("deletes expired tasks with their blobs and traces, and leaves kept, waiting and other tenants' tasks", async () => {
    t.llm.on("text", BIG);
    const key = await tenant("ret-acme", { retention_days: 1 });
    const other = await tenant("ret-other", {});
    const expired = await finished(key, { plan: PLAN });
    await marked("ret-acme", expired);
    const kept = await finished(key, { plan: PLAN, keep: true });
    const theirs = await finished(other, { plan: PLAN });
    const live = await waiting(key);
    // As a retry leaves it: a marker from an earlier end, on a task that waits again.
    await t.stack.system.stores.expiries.put(
      "ret-acme",
      live,
      new Date(Date.now() + 86_400_000).toISOString(),
    );

    const before = await itemsOf("ret-acme", expired);
    const [sha] = blobShas(before);
    expect(sha).toBeDefined();
    expect(before.some((i) => i.sk === "EXPIRES")).toBe(true);
    expect((await itemsOf("ret-acme", kept)).some((i) => i.sk === "EXPIRES")).toBe(false);
    expect((await itemsOf("ret-other", theirs)).some((i) => i.sk === "EXPIRES")).toBe(false);
    // The other tenant's task holds the same bytes under its own prefix.
    expect(blobShas(await itemsOf("ret-other", theirs))).toContain(sha);
    expect(await blobs().get(taskBlobPrefix("ret-acme", expired), sha!)).not.toBeNull();
    const commits = await t.api("GET", `/v1/tasks/${expired}/branches/main/commits`, undefined, {
      key,
    });
    const step = commits.body.commits.find((c: { seq_no: number | null }) => c.seq_no === 0);
    const trace = await t.api(
      "GET",
      `/v1/tasks/${expired}/commits/${step.commit_id}/llm-calls/0`,
      undefined,
      { key },
    );
    expect(trace.status).toBe(200);

    // Not yet due: nothing goes.
    expect(await t.stack.system.retention.sweep()).toEqual({
      deleted: 0,
      dropped: 0,
      postponed: 0,
    });
    offsetMs = 2 * 86_400_000;
    // The stack's own sweep (every 10 s) may come first: the state after is what counts.
    await t.stack.system.retention.sweep();

    expect(await itemsOf("ret-acme", expired)).toEqual([]);
    expect(await blobs().get(taskBlobPrefix("ret-acme", expired), sha!)).toBeNull();
    const traces = `${LLM_TRACE_ROOT}/ret-acme/${expired}`;
    expect(await blobs().deleteOlderThan(traces, new Date(8.64e15))).toBe(0);
    expect((await t.api("GET", `/v1/tasks/${expired}`, undefined, { key })).status).toBe(404);
    const listed = await t.api("GET", "/v1/tasks", undefined, { key });
    expect(listed.body.tasks.map((x: { task_id: string }) => x.task_id).sort()).toEqual(
      [kept, live].sort(),
    );
    // What stays: the kept task, the waiting one (its marker gone), the other tenant's with its blob.
    expect((await t.api("GET", `/v1/tasks/${kept}`, undefined, { key })).body.keep).toBe(true);
    expect((await t.api("GET", `/v1/tasks/${live}`, undefined, { key })).body.status).toBe(
      "waiting",
    );
    expect((await itemsOf("ret-acme", live)).some((i) => i.sk === "EXPIRES")).toBe(false);
    expect(await blobs().get(taskBlobPrefix("ret-other", theirs), sha!)).not.toBeNull();
    const read = await t.api("GET", `/v1/tasks/${theirs}/blobs/${sha}`, undefined, { key: other });
    expect(read.status).toBe(200);
  });

  it("lets a kept task expire again once let go, from then, and refuses another tenant's task", async () => {
    offsetMs = 2 * 86_400_000;
    t.llm.on("text", "short");
    const key = await tenant("ret-keep", { retention_days: 1 });
    const mallory = await tenant("ret-mallory", {});
    const taskId = await finished(key, { plan: PLAN, keep: true });
    const attack = await t.api("DELETE", `/v1/tasks/${taskId}/keep`, undefined, { key: mallory });
    expect(attack.status).toBe(404);
    expect((await t.api("GET", `/v1/tasks/${taskId}`, undefined, { key })).body.keep).toBe(true);
    const letGo = await t.api("DELETE", `/v1/tasks/${taskId}/keep`, undefined, { key });
    expect(letGo.body).toEqual({ keep: false });
    await marked("ret-keep", taskId);
    offsetMs = 4 * 86_400_000;
    await t.stack.system.retention.sweep();
    expect((await t.api("GET", `/v1/tasks/${taskId}`, undefined, { key })).status).toBe(404);
    expect((await t.api("PUT", "/v1/tasks/tsk_nope/keep", undefined, { key })).status).toBe(404);
  });

  it("uses the namespace's days over the tenant's", async () => {
    offsetMs = 4 * 86_400_000;
    t.llm.on("text", "short");
    const key = await tenant("ret-ns", { retention_days: 30 });
    const ns = await t.api(
      "PUT",
      "/v1/namespaces/brief",
      { allowed_tools: ["llm_generate"], retention_days: 1 },
      { key },
    );
    expect(ns.status).toBe(200);
    expect(ns.body.retention_days).toBe(1);
    const short = await finished(key, { plan: PLAN, namespace: "brief" });
    const long = await finished(key, { plan: PLAN });
    await marked("ret-ns", short);
    await marked("ret-ns", long);
    offsetMs = 6 * 86_400_000;
    await t.stack.system.retention.sweep();
    expect((await t.api("GET", `/v1/tasks/${short}`, undefined, { key })).status).toBe(404);
    expect((await t.api("GET", `/v1/tasks/${long}`, undefined, { key })).status).toBe(200);
    const bad = await t.api(
      "PUT",
      "/v1/namespaces/brief",
      { allowed_tools: [], retention_days: 0 },
      { key },
    );
    expect(bad.status).toBe(400);
  });

  it("leaves an expired task whose fork still runs, with the blob the fork shares and then reads", async () => {
    t.llm.on("text", BIG);
    const key = await tenant("ret-fork", { retention_days: 30 });
    const plan = [
      PLAN[0],
      {
        seq_no: 1,
        type: "calling",
        parameters: {
          tool_name: "ask_human",
          tool_params: { question: "Ship it?", schema: { type: "boolean" } },
          output_vars: "ok",
        },
      },
      { seq_no: 2, type: "assign", parameters: { final_answer: "${x}" } },
    ];
    const created = await t.api("POST", "/v1/tasks", { plan }, { key });
    const taskId = created.body.task_id as string;
    for (let i = 0; i < 400; i++) {
      const task = await t.api("GET", `/v1/tasks/${taskId}`, undefined, { key });
      if (task.body.status === "waiting") break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const answered = await t.api(
      "POST",
      `/v1/tasks/${taskId}/branches/main/input`,
      { answer: true },
      { key },
    );
    expect(answered.status).toBe(200);
    expect((await t.waitForTask(taskId, { key })).status).toBe("completed");
    await marked("ret-fork", taskId);
    const [sha] = blobShas(await itemsOf("ret-fork", taskId));
    expect(sha).toBeDefined();
    // A fork after the generated text: it shares the value (the blob) and waits for its answer.
    const commits = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits`, undefined, {
      key,
    });
    const step0 = commits.body.commits.find((c: { seq_no: number | null }) => c.seq_no === 0);
    const fork = await t.api(
      "POST",
      `/v1/tasks/${taskId}/branches`,
      { from_commit: step0.commit_id, name: "again" },
      { key },
    );
    expect(fork.status).toBe(202);
    for (let i = 0; i < 400; i++) {
      const b = await t.api("GET", `/v1/tasks/${taskId}/branches/again`, undefined, { key });
      if (b.body.status === "waiting") break;
      await new Promise((r) => setTimeout(r, 25));
    }
    // Its expiry comes while the fork waits: the sweep looks at it again later, deleting nothing.
    const stack = t.stack.system.retention;
    const due = { tenant_id: "ret-fork", task_id: taskId, expires_at: "" } as never;
    expect(await stack.expire(due)).toBe("postponed");
    expect(await blobs().get(taskBlobPrefix("ret-fork", taskId), sha!)).not.toBeNull();
    // The fork goes on, reading the shared value.
    const input = await t.api(
      "POST",
      `/v1/tasks/${taskId}/branches/again/input`,
      { answer: false },
      { key },
    );
    expect(input.status).toBe(200);
    for (let i = 0; i < 400; i++) {
      const b = await t.api("GET", `/v1/tasks/${taskId}/branches/again`, undefined, { key });
      if (b.body.status === "completed") break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const again = await t.api("GET", `/v1/tasks/${taskId}/branches/again`, undefined, { key });
    expect(again.body.status).toBe("completed");
    // Its answer is the shared value, too large to inline: a reference to the blob, still there.
    const ref = again.body.final_answer as { $ref: string; sha256: string };
    expect(ref.$ref).toBe("s3");
    const bytes = await fetch(`${t.url}/v1/tasks/${taskId}/blobs/${ref.sha256}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(bytes.status).toBe(200);
    expect(await bytes.text()).toContain("otter otter");
  });

  it("deletes no task forked while the sweep decides about it: the fork is refused or the task stays", async () => {
    t.llm.on("text", "short");
    const key = await tenant("ret-race", { retention_days: 30 });
    const taskId = await finished(key, { plan: PLAN });
    await marked("ret-race", taskId);
    const commits = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits`, undefined, {
      key,
    });
    const from = commits.body.commits.find((c: { seq_no: number | null }) => c.seq_no === 0);
    // A sweep of its own over the stack's stores, whose read of the task's branches
    // lets a fork in just after it: the fork comes between the sweep's decision and its deletion.
    const deps = retentionDeps();
    const store = deps.store;
    let fork: { status: number; body: { name?: string } } | null = null;
    const racing = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== "listBranches") return Reflect.get(target, prop, receiver);
        return async (...args: Parameters<typeof target.listBranches>) => {
          const listed = await target.listBranches(...args);
          fork ??= await t.api(
            "POST",
            `/v1/tasks/${taskId}/branches`,
            { from_commit: from.commit_id, name: "late" },
            { key },
          );
          return listed;
        };
      },
    });
    const sweep = new Retention({ ...deps, store: racing });
    await sweep.expire({ tenant_id: "ret-race", task_id: taskId, expires_at: "" } as never);
    expect(fork).not.toBeNull();
    const task = await t.api("GET", `/v1/tasks/${taskId}`, undefined, { key });
    if (fork!.status === 202) {
      // The fork was let in: the task and its fork are there, and the fork runs to its end.
      expect(task.status).toBe(200);
      expect((await t.waitForTask(taskId, { key })).status).toBe("completed");
      const late = await t.api("GET", `/v1/tasks/${taskId}/branches/late`, undefined, { key });
      expect(late.status).toBe(200);
      for (let i = 0; i < 400; i++) {
        const b = await t.api("GET", `/v1/tasks/${taskId}/branches/late`, undefined, { key });
        if (b.body.status === "completed") break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(
        (await t.api("GET", `/v1/tasks/${taskId}/branches/late`, undefined, { key })).body.status,
      ).toBe("completed");
    } else {
      // Or the task went first, and the fork says so; nothing of it is left behind.
      expect(fork!.status).toBe(404);
      expect(task.status).toBe(404);
      expect(await itemsOf("ret-race", taskId)).toEqual([]);
    }
  });

  it("deletes no task kept while the sweep decides about it", async () => {
    t.llm.on("text", "short");
    const key = await tenant("ret-keep-race", { retention_days: 30 });
    const taskId = await finished(key, { plan: PLAN });
    await marked("ret-keep-race", taskId);
    const deps = retentionDeps();
    const store = deps.store;
    let kept: { status: number; body: unknown } | null = null;
    const racing = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== "listBranches") return Reflect.get(target, prop, receiver);
        return async (...args: Parameters<typeof target.listBranches>) => {
          const listed = await target.listBranches(...args);
          kept ??= await t.api("PUT", `/v1/tasks/${taskId}/keep`, undefined, { key });
          return listed;
        };
      },
    });
    const sweep = new Retention({ ...deps, store: racing });
    await sweep.expire({ tenant_id: "ret-keep-race", task_id: taskId, expires_at: "" } as never);
    // The keep was answered 200 while the sweep decided: the task is there, and kept.
    expect(kept!.status).toBe(200);
    const task = await t.api("GET", `/v1/tasks/${taskId}`, undefined, { key });
    expect(task.status).toBe(200);
    expect(task.body.keep).toBe(true);
  });

  it("finishes a deletion a crash cut short after the task's record went", async () => {
    offsetMs = 6 * 86_400_000;
    t.llm.on("text", BIG);
    const key = await tenant("ret-crash", { retention_days: 1 });
    const taskId = await finished(key, { plan: PLAN });
    await marked("ret-crash", taskId);
    const [sha] = blobShas(await itemsOf("ret-crash", taskId));
    // The state a crash leaves mid-purge: the record gone, commits, branches, blobs and marker left.
    await items().delete({ pk: `T#ret-crash#K#${taskId}`, sk: "TASK" });
    expect((await itemsOf("ret-crash", taskId)).length).toBeGreaterThan(2);
    offsetMs = 8 * 86_400_000;
    // The stack's own sweep (every 10 s) may come first: either one finishes it.
    await t.stack.system.retention.sweep();
    expect(await itemsOf("ret-crash", taskId)).toEqual([]);
    expect(await blobs().get(taskBlobPrefix("ret-crash", taskId), sha!)).toBeNull();
    const traces = `${LLM_TRACE_ROOT}/ret-crash/${taskId}`;
    expect(await blobs().deleteOlderThan(traces, new Date(8.64e15))).toBe(0);
  });
});

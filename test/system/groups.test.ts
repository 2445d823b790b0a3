/**
 * Parallel groups through the whole local stack (issue 16, part 1), with a
 * scripted LLM that answers each `llm_generate` after 500 ms: four independent
 * calls and a combining one give five linear commits in plan order whose
 * members ran at once (asserted from the commits' own run intervals in the
 * events stream, never from a wall-clock bound); every member message delivered
 * twice; the worker dying between two member commits and between the last one
 * and its enqueue; a fork at the third member's commit; a namespace that runs one
 * member at a time; bad settings and another tenant.
 */
import type { MemberMessage, StepMessage } from "@stackvm/core";
import { describe, expect, it } from "vitest";
import { readSse } from "../support/sse";
import { ADMIN_KEY, useTestStack } from "../support/stack";

/** A step or a member message, as the queue is sent it. */
type QueuedBody = (StepMessage & { member?: undefined }) | MemberMessage;

const t = useTestStack();

const gen = (seq: number, out: string, prompt: string) => ({
  seq_no: seq,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: out },
});

const fourPlusOne = [
  gen(0, "a", "Tell about A."),
  gen(1, "b", "Tell about B."),
  gen(2, "c", "Tell about C."),
  gen(3, "d", "Tell about D."),
  gen(4, "final_answer", "Combine: ${a} | ${b} | ${c} | ${d}"),
];

/** Answers every llm_generate after 500 ms, from its prompt only (so histories compare). */
function scriptLlm() {
  t.llm.on("text", async (request) => {
    await new Promise((r) => setTimeout(r, 500));
    const text = String(request.messages.at(-1)?.content ?? "");
    const about = /Tell about ([A-D])\./.exec(text);
    return about ? `fact ${about[1]}` : "combined";
  });
}

async function start(plan: unknown[], extra: Record<string, unknown> = {}, key?: string) {
  const created = await t.api("POST", "/v1/tasks", { plan, ...extra }, key ? { key } : {});
  expect(created.status).toBe(202);
  return created.body.task_id as string;
}

async function commits(taskId: string, branch = "main") {
  const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/${branch}/commits?limit=100`);
  return (body.commits as any[]).reverse();
}

const llmTexts = () => t.llm.requests.filter((r) => r.schemaName === "text");

/** The history as it reads: kinds, seq_nos, outputs; checked linear. */
function history(list: any[]) {
  list.forEach((c, i) => {
    expect(c.parent_id).toBe(i === 0 ? null : list[i - 1].commit_id);
  });
  return list.map((c) => [c.type, c.seq_no, c.outputs]);
}

const expected = [
  ["plan", null, {}],
  ["step", 0, { a: "fact A" }],
  ["step", 1, { b: "fact B" }],
  ["step", 2, { c: "fact C" }],
  ["step", 3, { d: "fact D" }],
  ["step", 4, { final_answer: "combined" }],
];

describe("parallel groups", () => {
  it("runs four independent calls at once and commits five linear commits in plan order", async () => {
    scriptLlm();
    const taskId = await start(fourPlusOne);
    const stream = await readSse(`${t.url}/v1/tasks/${taskId}/events`, t.apiKey, {
      until: (events) => events.some((e) => e.event === "end"),
    });
    expect(stream.status).toBe(200);
    const done = await t.waitForTask(taskId);
    expect(done).toMatchObject({ status: "completed", final_answer: "combined" });
    expect(history(await commits(taskId))).toEqual(expected);
    expect(llmTexts()).toHaveLength(5);

    // The stream shows the members running at once: every member started before any ended.
    const members = stream.events
      .filter((e) => e.event === "commit")
      .map((e) => JSON.parse(e.data))
      .filter((c) => c.details?.group);
    expect(members.map((c) => c.seq_no)).toEqual([0, 1, 2, 3]);
    for (const c of members) expect(c.details.group.members).toEqual([0, 1, 2, 3]);
    const lastStart = Math.max(...members.map((c) => Date.parse(c.details.group.started_at)));
    const firstEnd = Math.min(...members.map((c) => Date.parse(c.details.group.finished_at)));
    expect(lastStart).toBeLessThan(firstEnd);
    // The combining call waited for all four: it began after the last member ended.
    const combine = (await commits(taskId))[5];
    const lastEnd = Math.max(...members.map((c) => Date.parse(c.details.group.finished_at)));
    expect(Date.parse(combine.created_at)).toBeGreaterThanOrEqual(lastEnd);
  });

  it("commits each member once when every member message is delivered twice", async () => {
    scriptLlm();
    const queue = t.stack.system.step.queue;
    const send = queue.send.bind(queue);
    queue.send = async (body, options) => {
      await send(body, options);
      if ((body as QueuedBody).member !== undefined) {
        // A second delivery in a group of its own, so that it may run beside the first.
        await send(body, {
          groupId: `${options.groupId}-again`,
          deduplicationId: `${options.deduplicationId}-again`,
        });
      }
    };
    try {
      const taskId = await start(fourPlusOne);
      expect((await t.waitForTask(taskId)).final_answer).toBe("combined");
      // Let the copies be handled before reading: each finds its member held or the group gone.
      await new Promise((r) => setTimeout(r, 1500));
      expect(history(await commits(taskId))).toEqual(expected);
      const task = await t.api("GET", `/v1/tasks/${taskId}`);
      expect(task.body.usage.steps).toBe(5);
    } finally {
      queue.send = send;
    }
  });

  it("recovers to the same history when the worker dies between two member commits", async () => {
    scriptLlm();
    const store = t.stack.system.step.store;
    const queue = t.stack.system.step.queue;
    const advance = store.advanceBranch.bind(store);
    const send = queue.send.bind(queue);
    let taskId = "";
    const died: string[] = [];
    // Dies after writing member 1's commit, before moving the head to it.
    store.advanceBranch = async (tenant, task, name, head, changes) => {
      const to = changes.set?.find(([path]) => path[0] === "pc")?.[1];
      if (task === taskId && to === 2 && !died.includes("head")) {
        died.push("head");
        throw new Error("worker killed before the head move");
      }
      return advance(tenant, task, name, head, changes);
    };
    // Dies after the last member's commit, before sending the step after the group.
    queue.send = async (body, options) => {
      const m = body as QueuedBody;
      if (m.task_id === taskId && m.kind === "step" && died.length === 1) {
        const branch = await store.getBranch("local", taskId, "main");
        if (branch?.pc === 4 && branch.head === m.head) {
          died.push("enqueue");
          throw new Error("worker killed before the enqueue");
        }
      }
      return send(body, options);
    };
    try {
      taskId = await start(fourPlusOne);
      expect((await t.waitForTask(taskId)).final_answer).toBe("combined");
    } finally {
      store.advanceBranch = advance;
      queue.send = send;
    }
    expect(died).toEqual(["head", "enqueue"]);
    expect(history(await commits(taskId))).toEqual(expected);
    // Nothing ran twice: the held results were committed, not computed again.
    expect(llmTexts()).toHaveLength(5);
  });

  it("forks at the third member's commit and re-runs nothing before it", async () => {
    scriptLlm();
    const taskId = await start(fourPlusOne);
    await t.waitForTask(taskId);
    const main = await commits(taskId);
    const third = main[3];
    expect(third.seq_no).toBe(2);
    t.llm.requests.length = 0;
    const fork = await t.api("POST", `/v1/tasks/${taskId}/branches`, {
      from_commit: third.commit_id,
      name: "again",
    });
    expect(fork.status).toBe(202);
    let forked: any;
    for (let i = 0; i < 400; i++) {
      forked = (await t.api("GET", `/v1/tasks/${taskId}/branches/again`)).body;
      if (forked.status === "completed" || forked.status === "failed") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(forked).toMatchObject({ status: "completed", final_answer: "combined" });
    // Only member d and the combining call ran: a, b and c are shared, not repeated.
    expect(llmTexts().map((r) => String(r.messages.at(-1)?.content))).toEqual([
      expect.stringContaining("Tell about D."),
      expect.stringContaining("Combine: fact A | fact B | fact C | fact D"),
    ]);
    const own = await commits(taskId, "again");
    expect(own.at(-2)).toMatchObject({ seq_no: 3, outputs: { d: "fact D" } });
    expect(own.at(-1)).toMatchObject({ seq_no: 4, outputs: { final_answer: "combined" } });
  });

  it("runs one member at a time in a namespace with parallel_width 1, and refuses bad widths", async () => {
    for (const width of [0, 17, "4", 2.5]) {
      const bad = await t.api("PUT", "/v1/namespaces/serial", {
        allowed_tools: ["llm_generate"],
        parallel_width: width,
      });
      // Not what the schema says: 400, naming the field.
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain("parallel_width");
    }
    const put = await t.api("PUT", "/v1/namespaces/serial", {
      allowed_tools: ["llm_generate"],
      parallel_width: 1,
    });
    expect(put.status).toBe(200);
    expect(put.body.parallel_width).toBe(1);
    scriptLlm();
    const taskId = await start(fourPlusOne, { namespace: "serial" });
    expect((await t.waitForTask(taskId)).final_answer).toBe("combined");
    const list = await commits(taskId);
    expect(history(list)).toEqual(expected);
    expect(list.some((c) => c.details?.group)).toBe(false);
  });

  it("refuses a marked group whose members read each other, and hides a task from another tenant", async () => {
    const refused = await t.api("POST", "/v1/tasks", {
      plan: [
        { ...gen(0, "a", "x"), group: "g" },
        { ...gen(1, "b", "${a}"), group: "g" },
        gen(2, "final_answer", "${b}"),
      ],
    });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain("group_reads_member");
    const checked = await t.api("POST", "/v1/plans/validate", { plan: fourPlusOne });
    expect(checked.body).toMatchObject({
      valid: true,
      groups: [{ members: [0, 1, 2, 3], name: null }],
    });
    scriptLlm();
    const taskId = await start(fourPlusOne);
    await t.waitForTask(taskId);
    const other = await t.api(
      "POST",
      "/v1/admin/tenants/stranger-groups/keys",
      { name: "b" },
      { key: ADMIN_KEY },
    );
    const key = other.body.key as string;
    const seen = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits`, undefined, {
      key,
    });
    expect(seen.status).toBe(404);
    const fork = await t.api(
      "POST",
      `/v1/tasks/${taskId}/branches`,
      { from_commit: (await commits(taskId))[3].commit_id, name: "theirs" },
      { key },
    );
    expect(fork.status).toBe(404);
  });

  it("shows a member's call in flight on the task while the group runs, gone once it joined", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    t.llm.streaming = {
      chunkChars: 2,
      beforeChunk: async (index, _text, request) => {
        if (request.schemaName === "text" && index === 2) await held;
      },
    };
    t.llm.on("text", "a member's answer");
    const taskId = await start([
      gen(0, "a", "Tell about A."),
      gen(1, "b", "Tell about B."),
      gen(2, "final_answer", "Combine: ${a} | ${b}"),
    ]);
    try {
      const deadline = Date.now() + 30_000;
      let task: any;
      for (;;) {
        task = (await t.api("GET", `/v1/tasks/${taskId}`)).body;
        if (task.llm_call?.tokens_so_far > 0 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(task.status).toBe("running");
      expect(task.llm_call).toMatchObject({ purpose: "llm_generate", attempt: 1 });
      // The group is what runs: its base is the head, no member committed yet.
      const main = await t.api("GET", `/v1/tasks/${taskId}/branches/main`);
      expect(main.body.group).toBeDefined();
    } finally {
      release();
    }
    const done = await t.waitForTask(taskId);
    expect(done.status).toBe("completed");
    expect(done.llm_call).toBeUndefined();
  });
});

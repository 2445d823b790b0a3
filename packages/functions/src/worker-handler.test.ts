import { runStep, TooLargeError, type WebhookService } from "@stackvm/core";
import { CreateTaskInput } from "@stackvm/core/api-records";
import { FakeLlm, memorySystem } from "@stackvm/core/testing";
import type { Context, SQSEvent, SQSRecord } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { createWorkerHandler } from "./worker-handler";

/** These tests send no webhook messages. */
const noWebhooks = {
  deliver: async () => {
    throw new Error("no webhook expected");
  },
} as unknown as WebhookService;

const context = { functionName: "worker", getRemainingTimeInMillis: () => 60_000 } as Context;

function record(body: unknown, id: string, group: string): SQSRecord {
  return {
    messageId: id,
    receiptHandle: `rh-${id}`,
    body: typeof body === "string" ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: "0",
      SenderId: "test",
      ApproximateFirstReceiveTimestamp: "0",
      MessageGroupId: group,
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:steps.fifo",
    awsRegion: "us-east-1",
  };
}

/** A log that keeps each line's level and message. */
function recordingLog() {
  const lines: Array<[string, string]> = [];
  const log = {
    debug() {},
    info: (message: string) => lines.push(["info", message]),
    warn: (message: string) => lines.push(["warn", message]),
    error: (message: string) => lines.push(["error", message]),
  };
  return { lines, log };
}

const plan = [
  { seq_no: 0, type: "assign", parameters: { x: 1 } },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
];

describe("createWorkerHandler", () => {
  it("reports only the record that failed and does not redo the others", async () => {
    const sys = memorySystem();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
      ids.push(task.task_id);
    }
    const messages = (await sys.queue.receive(10)).map((m) => JSON.parse(m.body));
    expect(messages).toHaveLength(3);
    let calls = 0;
    const failing = ids[1]!;
    const handler = createWorkerHandler(
      {
        ...sys.step,
        planner: sys.step.planner,
        // The second task's store read throws, as a crashing dependency would.
        store: new Proxy(sys.step.store, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver);
            if (prop !== "getBranch")
              return typeof value === "function" ? value.bind(target) : value;
            return async (tenant: string, taskId: string, name: string) => {
              calls++;
              if (taskId === failing) throw new Error("store unavailable");
              return target.getBranch(tenant, taskId, name);
            };
          },
        }),
      },
      noWebhooks,
    );
    const event: SQSEvent = {
      Records: messages.map((m, i) => record(m, `m${i}`, `${m.tenant_id}:${m.task_id}:main`)),
    };
    const result = await handler(event, context);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: "m1" }]);
    // Three steps' reads, and one more by the failed step to record its retry (failure path only).
    expect(calls).toBe(4);
    for (const id of [ids[0]!, ids[2]!]) {
      const branch = await sys.store.getBranch("acme", id, "main");
      expect(branch!.depth).toBe(0);
      // Running the same message again writes no second commit (it only re-enqueues the next step).
      const again = await runStep(sys.step, messages[ids.indexOf(id)]);
      expect(again.outcome).toBe("resumed");
      expect((await sys.store.getBranch("acme", id, "main"))!.depth).toBe(0);
    }
    expect((await sys.store.getBranch("acme", failing, "main"))!.head).toBeNull();
  });

  it("fails a branch whose head move the store refuses at once, and shows a transient failure as retrying", async () => {
    const sys = memorySystem();
    const refused = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    const flaky = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    const messages = (await sys.queue.receive(10)).map((m) => JSON.parse(m.body));
    const handler = createWorkerHandler(
      {
        ...sys.step,
        store: new Proxy(sys.step.store, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver);
            if (prop !== "advanceBranch")
              return typeof value === "function" ? value.bind(target) : value;
            return async (_tenant: string, taskId: string) => {
              if (taskId === refused.task.task_id) {
                throw new TooLargeError("a record would exceed the store's limit of 400 KB");
              }
              throw new Error("connection reset");
            };
          },
        }),
      },
      noWebhooks,
    );
    const result = await handler(
      { Records: messages.map((m, i) => record(m, `m${i}`, `${m.tenant_id}:${m.task_id}:main`)) },
      context,
    );
    const flakyIndex = messages.findIndex((m) => m.task_id === flaky.task.task_id);
    // Only the transient failure goes back to the queue.
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: `m${flakyIndex}` }]);
    const failed = await sys.tasks.get("acme", refused.task.task_id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(
      /the store refused the step after the start: .*400 KB.*not retried/,
    );
    const waiting = await sys.tasks.get("acme", flaky.task.task_id);
    expect(waiting.status).toBe("running");
    expect(waiting.retrying).toMatchObject({ attempt: 1, error: { message: "connection reset" } });
  });

  it("drops a message that is not a step message instead of retrying it forever", async () => {
    const sys = memorySystem();
    const handler = createWorkerHandler(sys.step, noWebhooks);
    const result = await handler(
      { Records: [record("not json", "a", "g"), record({ v: 2, task_id: "x" }, "b", "g")] },
      context,
    );
    expect(result.batchItemFailures).toEqual([]);
  });

  it("logs an early wake at info, not as a retry, and keeps its message", async () => {
    const sys = memorySystem();
    const { task } = await sys.tasks.create(
      "acme",
      CreateTaskInput.parse({
        plan: [
          { seq_no: 0, type: "wait", parameters: { seconds: 60 } },
          { seq_no: 1, type: "assign", parameters: { final_answer: "done" } },
        ],
      }),
    );
    // The plan commit, then the wait: the branch waits 60 s.
    for (let i = 0; i < 2; i++) {
      const [m] = await sys.queue.receive(1);
      await runStep(sys.step, JSON.parse(m!.body));
      await sys.queue.delete(m!.receiptHandle);
    }
    const branch = await sys.store.getBranch("acme", task.task_id, "main");
    expect(branch!.status).toBe("waiting");
    const { lines, log } = recordingLog();
    const handler = createWorkerHandler({ ...sys.step, log }, noWebhooks);
    const early = {
      v: 1,
      kind: "step",
      tenant_id: "acme",
      task_id: task.task_id,
      branch: "main",
      head: branch!.head,
    };
    const answer = await handler({ Records: [record(early, "m-early", "g")] } as SQSEvent, context);
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: "m-early" }]);
    expect(lines).toEqual([["info", "wake early: hidden until due"]]);
  });

  it("runs a group member message an earlier release sent (a step with `member`) as a member, as an upgrade finds it in the queue", async () => {
    const llm = new FakeLlm((request) => `answer to ${String(request.messages.at(-1)?.content)}`);
    const sys = memorySystem({ llm });
    const gen = (seq: number, out: string, prompt: string) => ({
      seq_no: seq,
      type: "calling",
      parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: out },
    });
    const group = [gen(0, "a", "A"), gen(1, "b", "B"), gen(2, "c", "C"), gen(3, "d", "D")];
    const { task } = await sys.tasks.create(
      "acme",
      CreateTaskInput.parse({ plan: [...group, gen(4, "final_answer", "${a} ${b} ${c} ${d}")] }),
    );
    const handler = createWorkerHandler(sys.step, noWebhooks);
    // The plan's commit, then the step that starts the group: it runs member 0 and sends the others.
    for (const id of ["m-plan", "m-group"]) {
      const [m] = await sys.queue.receive(1);
      await handler({ Records: [record(m!.body, id, "g")] }, context);
      await sys.queue.delete(m!.receiptHandle);
    }
    const sent = (await sys.queue.receive(10)).map((m) => JSON.parse(m.body));
    expect(sent.map((m) => [m.kind, m.member])).toEqual([
      ["member", 1],
      ["member", 2],
      ["member", 3],
    ]);
    // As the previous release wrote them: step messages with `member`, the group's base as head.
    const old = sent.map(({ kind: _, base, ...rest }) => ({ ...rest, kind: "step", head: base }));
    const answer = await handler(
      { Records: old.map((m, i) => record(m, `m-old${i}`, `g${i}`)) },
      context,
    );
    expect(answer.batchItemFailures).toEqual([]);
    // Each ran as its member and the last one joined: the group's four commits, in plan order.
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    expect(commits.map((c) => [c.type, c.seq_no]).reverse()).toEqual([
      ["plan", null],
      ["step", 0],
      ["step", 1],
      ["step", 2],
      ["step", 3],
    ]);
    expect(commits[0]!.outputs.d).toBe("answer to D");
  });

  it("joins a group once when each member message is delivered four times, at once in two workers, and again after the join", async () => {
    const llm = new FakeLlm((request) => `answer to ${String(request.messages.at(-1)?.content)}`);
    const sys = memorySystem({ llm });
    const gen = (seq: number, out: string, prompt: string) => ({
      seq_no: seq,
      type: "calling",
      parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: out },
    });
    const group = [gen(0, "a", "A"), gen(1, "b", "B"), gen(2, "c", "C"), gen(3, "d", "D")];
    const { task } = await sys.tasks.create(
      "acme",
      CreateTaskInput.parse({ plan: [...group, gen(4, "final_answer", "${a} ${b} ${c} ${d}")] }),
    );
    const handler = createWorkerHandler(sys.step, noWebhooks);
    for (const id of ["m-plan", "m-group"]) {
      const [m] = await sys.queue.receive(1);
      await handler({ Records: [record(m!.body, id, "g")] }, context);
      await sys.queue.delete(m!.receiptHandle);
    }
    const members = await sys.queue.receive(10);
    expect(members).toHaveLength(3);
    for (const m of members) await sys.queue.delete(m.receiptHandle);
    // SQS delivers at least once: each member twice in one batch (the FIFO processor
    // runs a batch's records one after another), and in a second invocation at once
    // (two workers, the message's visibility run out under the first).
    const batch = (suffix: string) =>
      members.flatMap((m, i) => [
        record(m.body, `m${i}${suffix}1`, `g${i}`),
        record(m.body, `m${i}${suffix}2`, `g${i}`),
      ]);
    const answers = await Promise.all([
      handler({ Records: batch("a") }, context),
      handler({ Records: batch("b") }, context),
    ]);
    expect(answers.flatMap((a) => a.batchItemFailures)).toEqual([]);
    const calls = llm.requests.length;
    // And once more after the group joined.
    const late = members.map((m, i) => record(m.body, `m${i}c`, `g${i}`));
    expect((await handler({ Records: late }, context)).batchItemFailures).toEqual([]);
    expect(llm.requests.length).toBe(calls);
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    expect(commits.map((c) => [c.type, c.seq_no]).reverse()).toEqual([
      ["plan", null],
      ["step", 0],
      ["step", 1],
      ["step", 2],
      ["step", 3],
    ]);
    // Whatever the deliveries, what comes next runs once: the step after the group
    // (a duplicate that found the group joined may also send one for the base, which
    // only finds the join done).
    const next = await sys.queue.receive(10);
    const heads = next.map((m) => JSON.parse(m.body).head as string);
    expect(heads).toContain(commits[0]!.commit_id);
    const base = commits.at(-1)!.commit_id;
    expect(heads.filter((head) => head !== commits[0]!.commit_id && head !== base)).toEqual([]);
    await handler({ Records: next.map((m, i) => record(m.body, `m-next${i}`, "g")) }, context);
    for (const m of next) await sys.queue.delete(m.receiptHandle);
    expect(await sys.queue.receive(10)).toEqual([]);
    // The answer's call is made once. A member delivered to two workers at once may
    // call its model in both (the first result held wins, as for any step: a tool's
    // effect is at least once); one delivered again later calls nothing.
    const asked = (prompt: string) =>
      llm.requests.filter((r) => r.messages.at(-1)?.content === prompt).length;
    expect(asked("answer to A answer to B answer to C answer to D")).toBe(1);
    expect(asked("A")).toBe(1);
    for (const prompt of ["B", "C", "D"]) expect(asked(prompt)).toBeLessThanOrEqual(2);
    const ended = await sys.tasks.get("acme", task.task_id);
    expect(ended.status).toBe("completed");
    expect(ended.final_answer).toBe("answer to answer to A answer to B answer to C answer to D");
  });

  it("runs a step message written before messages had a kind, as an upgrade finds it in the queue", async () => {
    const sys = memorySystem();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    const [sent] = await sys.queue.receive(1);
    const { kind, ...old } = JSON.parse(sent!.body);
    expect(kind).toBe("step");
    const handler = createWorkerHandler(sys.step, noWebhooks);
    const answer = await handler({ Records: [record(old, "m-old", "g")] }, context);
    expect(answer.batchItemFailures).toEqual([]);
    // The plan's commit is written: the old body ran the first step.
    expect((await sys.store.getBranch("acme", task.task_id, "main"))!.depth).toBe(0);
  });

  it("drops each kind of unreadable message with its own log line, once, without a retry", async () => {
    const sys = memorySystem();
    const { lines, log } = recordingLog();
    const handler = createWorkerHandler({ ...sys.step, log }, noWebhooks);
    const answer = await handler(
      {
        Records: [
          record("{not json", "a", "g1"),
          record({ v: 1, kind: "webhook", tenant_id: "acme" }, "b", "g2"),
          record({ v: 1, kind: "ingest", op: "burn" }, "c", "g3"),
        ],
      },
      context,
    );
    expect(answer.batchItemFailures).toEqual([]);
    expect(lines).toEqual([
      ["error", "dropped a malformed queue message"],
      ["error", "dropped a webhook message this worker cannot read"],
      ["error", "dropped a knowledge message this worker cannot handle"],
    ]);
  });
});

import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../store/records";
import { integrateSystem } from "../testing/integrate-system";
import { webhookHeaders } from "../webhooks/signature";
import { ForkInput } from "./fork-input";
import { RetryInput } from "./retry";
import { CreateScheduleInput } from "./schedule-input";
import { CreateTaskInput } from "./task-input";
import { MAX_CLUSTER_LENGTH, MAX_TITLE_LENGTH, storedTitle, taskTitle } from "./task-title";
import { CreateTriggerInput } from "./triggers";

const llm = (prompt: unknown, seq_no = 0) => ({
  seq_no,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: "x" },
});
const assign = { seq_no: 0, type: "assign", parameters: { final_answer: 42 } };

describe("taskTitle", () => {
  it.each<[string, Parameters<typeof taskTitle>[0], string]>([
    [
      "the client's name first",
      { name: "nightly sums", goal: "Add", plan: [llm("p")] },
      "nightly sums",
    ],
    ["then the goal", { goal: "Plan my week", plan: [llm("p")] }, "Plan my week"],
    [
      "then the first llm_generate prompt",
      { plan: [assign, llm("Write a haiku about ${topic}", 1), llm("second", 2)] },
      "Write a haiku about ${topic}",
    ],
    [
      "StackVM's form of the call",
      { plan: [{ seq_no: 0, type: "llm_generate", parameters: { prompt: "Summarize" } }] },
      "Summarize",
    ],
    ["a prompt on one line", { plan: [llm("  Line one\n\n  line two ")] }, "Line one line two"],
    [
      "past a blank name and a prompt that is not text",
      { name: "  ", plan: [llm(7), llm("real", 1)] },
      "real",
    ],
    ["the task id for a plan without a call", { plan: [assign] }, "plan task tsk_1"],
  ])("takes %s", (_what, source, title) => {
    expect(taskTitle(source, "tsk_1")).toBe(title);
  });

  it("cuts a long prompt to one short line with an ellipsis, by characters", () => {
    const title = taskTitle({ plan: [llm("ü".repeat(500))] }, "tsk_1");
    expect(Array.from(title)).toHaveLength(MAX_TITLE_LENGTH);
    expect(title.endsWith("…")).toBe(true);
  });

  it("tells two tasks started from plans apart", () => {
    const a = taskTitle({ plan: [llm("Translate the menu")] }, "tsk_a");
    const b = taskTitle({ plan: [llm("Draft the newsletter")] }, "tsk_b");
    const c = taskTitle({ plan: [assign] }, "tsk_c");
    expect(new Set([a, b, c]).size).toBe(3);
  });

  it("is what a created task's input gives (a name is part of the contract)", () => {
    const input = CreateTaskInput.parse({ name: "weekly report", plan: [assign] });
    expect(taskTitle(input, "tsk_1")).toBe("weekly report");
    expect(CreateTaskInput.safeParse({ name: "", plan: [assign] }).success).toBe(false);
    expect(CreateTaskInput.safeParse({ name: "x".repeat(201), plan: [assign] }).success).toBe(
      false,
    );
  });
});

describe("hostile names and goals", () => {
  const ESC = "\u001b";
  it.each([
    ["an escape sequence that clears the screen", `${ESC}[2J${ESC}[Hfine`, "U+001B at offset 0"],
    ["a window title rewrite (OSC, ended by BEL)", `a${ESC}]0;owned\u0007`, "U+001B at offset 1"],
    ["an 8-bit CSI (U+009B)", "x\u009b31m", "U+009B at offset 1"],
    ["a NUL", "a\u0000b", "U+0000 at offset 1"],
    ["a new line", "two\nlines", "U+000A at offset 3"],
    ["DEL", "a\u007f", "U+007F at offset 1"],
    ["an unpaired high surrogate", "a\ud800b", "unpaired surrogate U+D800 at offset 1"],
    ["an unpaired low surrogate", "\udfffb", "unpaired surrogate U+DFFF at offset 0"],
  ])(
    "refuses %s in a task's, a trigger's and a schedule's name, saying where",
    (_what, name, says) => {
      for (const parsed of [
        CreateTaskInput.safeParse({ name, plan: [assign] }),
        CreateTriggerInput.safeParse({ name, plan: [assign] }),
        CreateScheduleInput.safeParse({ name, cron: "0 9 * * *", plan: [assign] }),
      ]) {
        expect(parsed.success).toBe(false);
        expect(JSON.stringify(parsed.error?.issues)).toContain(says);
        expect(parsed.error?.issues[0]?.path).toEqual(["name"]);
      }
    },
  );

  it("gives the retry and fork paths no way to rename a task: a fork's branch name is a-z, 0-9, _ and -, a retry takes no name", () => {
    expect(ForkInput.safeParse({ from_commit: "c1", name: `${ESC}[2J` }).success).toBe(false);
    expect(ForkInput.safeParse({ from_commit: "c1", name: "b\u202eexe" }).success).toBe(false);
    expect(RetryInput.safeParse({ from: "start", name: "renamed" }).success).toBe(false);
  });

  it("accepts a name in any script, with emoji and right-to-left text", () => {
    for (const name of ["nightly sums", "Résumé · 日本語 👩🏽‍💻", "تقرير أسبوعي", "a\u200fb"]) {
      expect(CreateTaskInput.safeParse({ name, plan: [assign] }).success).toBe(true);
    }
  });

  it("shows a goal's or a prompt's control characters and unpaired surrogates as U+FFFD", () => {
    expect(taskTitle({ goal: `${ESC}]52;c;b3duZWQ=\u0007Sum the rows` }, "t")).toBe(
      "\ufffd]52;c;b3duZWQ=\ufffdSum the rows",
    );
    expect(taskTitle({ plan: [llm("a\ud800\u009b2Jb")] }, "t")).toBe("a\ufffd\ufffd2Jb");
    // A title stored before the rule is read through it.
    const old = { task_id: "tsk_9", goal: null, title: `${ESC}[2Jold` } as TaskRecord;
    expect(storedTitle(old)).toBe("\ufffd[2Jold");
  });

  it("never cuts a grapheme cluster in two, and keeps a cluster to a few code points", () => {
    const family = "👨‍👩‍👧‍👦"; // 7 code points, one cluster
    const title = taskTitle({ goal: `${"a".repeat(MAX_TITLE_LENGTH - 4)}${family}tail` }, "t");
    expect(title).toBe(`${"a".repeat(MAX_TITLE_LENGTH - 4)}…`);
    const zalgo = `Z${"\u0301".repeat(5000)}ok`;
    const short = taskTitle({ goal: zalgo }, "t");
    expect(short).toBe(`Z${"\u0301".repeat(MAX_CLUSTER_LENGTH - 1)}ok`);
    const many = taskTitle({ goal: `e${"\u0301".repeat(40)} `.repeat(200) }, "t");
    expect(Array.from(many).length).toBeLessThanOrEqual(MAX_TITLE_LENGTH);
    expect(many.endsWith("…")).toBe(true);
    expect(many).not.toMatch(/[\ud800-\udfff](?![\udc00-\udfff])/);
  });
});

describe("storedTitle", () => {
  it("reads the stored title, and makes one for a task stored before titles", () => {
    const base = { task_id: "tsk_9", goal: null } as TaskRecord;
    expect(storedTitle({ ...base, title: "kept" })).toBe("kept");
    expect(storedTitle({ ...base, goal: "A goal" })).toBe("A goal");
    expect(storedTitle(base)).toBe("plan task tsk_9");
  });
});

describe("the titles of listed tasks", () => {
  it("tells plan tasks apart by their name, prompt, trigger or schedule, and keeps the goal's", async () => {
    const sys = integrateSystem();
    const start = (input: Record<string, unknown>) =>
      sys.tasks.create("acme", CreateTaskInput.parse(input));
    const answer = { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } };
    await start({ plan: [llm("Translate the menu into French"), answer] });
    await start({ name: "nightly sums", plan: [assign] });
    const bare = await start({ plan: [assign] });
    await start({ goal: "Plan my week", plan: [assign] });
    const { trigger, secret } = await sys.triggers.create(
      "acme",
      CreateTriggerInput.parse({ name: "orders-in", plan: [assign] }),
    );
    const body = JSON.stringify({ id: 1 });
    const headers = webhookHeaders(secret, "msg_1", Math.floor(sys.clock.now() / 1000), body);
    await sys.triggers.deliver(trigger.trigger_id, headers, new TextEncoder().encode(body));
    const schedule = await sys.schedules.create(
      "acme",
      CreateScheduleInput.parse({ name: "morning-tick", cron: "0 9 * * *", plan: [assign] }),
    );
    await sys.schedules.runDue({
      tenant_id: "acme",
      schedule_id: schedule.schedule_id,
      due_at: "2026-03-29T09:00:00Z",
    });

    const { tasks } = await sys.tasks.list("acme", { limit: 10 });
    expect(tasks.map((t) => [t.title, t.name]).sort()).toEqual(
      [
        ["Translate the menu into French", null],
        ["nightly sums", "nightly sums"],
        [`plan task ${bare.task.task_id}`, null],
        ["Plan my week", null],
        ["orders-in", "orders-in"],
        ["morning-tick", "morning-tick"],
      ].sort(),
    );
    // One read shows the same title as the list.
    expect((await sys.tasks.get("acme", bare.task.task_id)).title).toBe(
      `plan task ${bare.task.task_id}`,
    );
  });
});

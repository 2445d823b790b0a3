import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../store/records";
import { integrateSystem } from "../testing/integrate-system";
import { webhookHeaders } from "../webhooks/signature";
import { CreateScheduleInput } from "./schedules";
import { MAX_TITLE_LENGTH, storedTitle, taskTitle } from "./task-title";
import { CreateTaskInput } from "./tasks";
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

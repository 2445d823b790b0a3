import { describe, expect, it } from "vitest";
import { taskTitle } from "./task-title";

describe("taskTitle", () => {
  it.each([
    [{ goal: "Plan my week", metadata: { name: "ignored" } }, "Plan my week"],
    [{ goal: null, metadata: { name: "nightly sums" } }, "nightly sums"],
    [
      { goal: null, metadata: { schedule_id: "sch_9", due_at: "2026-11-27T09:00:00Z" } },
      "plan run by schedule sch_9 (due 2026-11-27T09:00:00Z)",
    ],
    [
      { goal: null, metadata: { trigger_id: "trg_4", webhook_id: "w" } },
      "plan started by trigger trg_4",
    ],
    [{ goal: null, metadata: {} }, "plan task tsk_1"],
    [{ goal: "  ", metadata: { name: 3 } }, "plan task tsk_1"],
  ])("names %j", (fields, title) => {
    expect(taskTitle({ task_id: "tsk_1", ...fields })).toBe(title);
  });

  it("takes the API's title first", () => {
    const titled = { task_id: "tsk_1", goal: null, title: "Translate the menu", metadata: {} };
    expect(taskTitle(titled)).toBe("Translate the menu");
    expect(taskTitle({ ...titled, title: " " })).toBe("plan task tsk_1");
  });

  it("tells two tasks started from plans apart", () => {
    const a = taskTitle({ task_id: "tsk_a", goal: null, metadata: {} });
    const b = taskTitle({ task_id: "tsk_b", goal: null, metadata: {} });
    expect(a).not.toBe(b);
  });
});

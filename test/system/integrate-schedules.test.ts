/**
 * Schedules over HTTP, and the scheduler function's handler (what EventBridge
 * Scheduler invokes on AWS and the local timer calls here) fired twice for one
 * due time.
 */

import { silentLog } from "@stackvm/core";
import { createScheduleHandler } from "@stackvm/functions";
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

const t = useTestStack();

const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "tick" } }];

describe("schedules", () => {
  it("creates, reads, lists, updates and deletes a schedule", async () => {
    const created = await t.api("POST", "/v1/schedules", {
      name: "morning",
      cron: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
      plan,
    });
    expect(created.status).toBe(201);
    const id = created.body.schedule_id;
    expect(created.body).toMatchObject({ enabled: true, timezone: "Europe/Berlin" });
    expect(Date.parse(created.body.next_run_at)).toBeGreaterThan(Date.now());
    expect((await t.api("GET", `/v1/schedules/${id}`)).body.cron).toBe("0 9 * * 1-5");
    const list = await t.api("GET", "/v1/schedules");
    expect(list.body.schedules.map((s: { schedule_id: string }) => s.schedule_id)).toContain(id);

    const paused = await t.api("PATCH", `/v1/schedules/${id}`, { enabled: false });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ enabled: false, next_run_at: null });
    const moved = await t.api("PATCH", `/v1/schedules/${id}`, {
      enabled: true,
      cron: "30 6 * * *",
      timezone: "UTC",
    });
    expect(moved.body.next_run_at).toMatch(/T06:30:00\.000Z$/);

    expect((await t.api("DELETE", `/v1/schedules/${id}`)).status).toBe(204);
    expect((await t.api("GET", `/v1/schedules/${id}`)).status).toBe(404);
  });

  it.each([
    [{ cron: "0 9 * *" }, "invalid_cron"],
    [{ cron: "0 9 1 * MON" }, "invalid_cron"],
    [{ timezone: "Europe/Atlantis" }, "invalid_timezone"],
  ])("answers 422 to %j", async (change, code) => {
    const answer = await t.api("POST", "/v1/schedules", {
      name: "bad",
      cron: "0 9 * * *",
      plan,
      ...change,
    });
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe(code);
  });

  it("starts one task with schedule_id and due_at when the scheduler fires twice for the same minute", async () => {
    const { body: schedule } = await t.api("POST", "/v1/schedules", {
      name: "twice",
      cron: "*/5 * * * *",
      plan,
    });
    const handler = createScheduleHandler(t.stack.system.schedules, silentLog);
    const event = {
      tenant_id: "local",
      schedule_id: schedule.schedule_id,
      due_at: "2026-05-04T10:05:00Z",
    };
    const outcomes = await Promise.all([handler(event), handler(event)]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(["duplicate", "started"]);
    const { body } = await t.api("GET", "/v1/tasks?limit=100");
    const runs = body.tasks.filter(
      (task: { metadata: { schedule_id?: string } }) =>
        task.metadata.schedule_id === schedule.schedule_id,
    );
    expect(runs).toHaveLength(1);
    expect(runs[0].metadata.due_at).toBe("2026-05-04T10:05:00.000Z");
    expect((await t.waitForTask(runs[0].task_id)).final_answer).toBe("tick");
  });

  it("starts nothing for a disabled schedule", async () => {
    const { body: schedule } = await t.api("POST", "/v1/schedules", {
      name: "off",
      cron: "*/5 * * * *",
      plan,
      enabled: false,
    });
    const handler = createScheduleHandler(t.stack.system.schedules, silentLog);
    const outcome = await handler({
      tenant_id: "local",
      schedule_id: schedule.schedule_id,
      due_at: "2026-05-04T10:05:00Z",
    });
    expect(outcome).toEqual({ outcome: "disabled" });
    const { body } = await t.api("GET", "/v1/tasks?limit=100");
    expect(
      body.tasks.filter(
        (task: { metadata: { schedule_id?: string } }) =>
          task.metadata.schedule_id === schedule.schedule_id,
      ),
    ).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { integrateSystem } from "../testing/integrate-system";
import { CreateScheduleInput } from "./schedule-input";

const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "tick" } }];

async function berlinSchedule(sys: ReturnType<typeof integrateSystem>, enabled = true) {
  return sys.schedules.create(
    "acme",
    CreateScheduleInput.parse({
      name: "morning",
      cron: "0 9 * * *",
      timezone: "Europe/Berlin",
      plan,
      enabled,
    }),
  );
}

describe("ScheduleService", () => {
  it("creates a schedule with its timer and its next run in UTC", async () => {
    const sys = integrateSystem();
    sys.clock.time = Date.parse("2026-03-28T12:00:00Z");
    const schedule = await berlinSchedule(sys);
    expect(schedule.next_run_at).toBe("2026-03-29T07:00:00.000Z");
    expect(sys.scheduler.timers.get(`acme/${schedule.schedule_id}`)).toEqual({
      tenant_id: "acme",
      schedule_id: schedule.schedule_id,
      cron: "0 9 * * *",
      timezone: "Europe/Berlin",
      enabled: true,
    });
  });

  it("starts one task with schedule_id and due_at when the scheduler fires twice for one due time", async () => {
    const sys = integrateSystem();
    const { schedule_id } = await berlinSchedule(sys);
    const run = { tenant_id: "acme", schedule_id, due_at: "2026-03-29T07:00:00Z" };
    const [first, second] = await Promise.all([
      sys.schedules.runDue(run),
      sys.schedules.runDue(run),
    ]);
    const third = await sys.schedules.runDue({ ...run, due_at: "2026-03-29T07:00:00.000Z" });
    const outcomes = [first.outcome, second.outcome, third.outcome].sort();
    expect(outcomes).toEqual(["duplicate", "duplicate", "started"]);
    const { tasks } = await sys.tasks.list("acme", { limit: 10 });
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.metadata).toEqual({ schedule_id, due_at: "2026-03-29T07:00:00.000Z" });
    await sys.drain();
    expect((await sys.tasks.get("acme", tasks[0]!.task_id)).final_answer).toBe("tick");
  });

  it("starts a task for each distinct due time", async () => {
    const sys = integrateSystem();
    const { schedule_id } = await berlinSchedule(sys);
    await sys.schedules.runDue({ tenant_id: "acme", schedule_id, due_at: "2026-03-28T08:00:00Z" });
    await sys.schedules.runDue({ tenant_id: "acme", schedule_id, due_at: "2026-03-29T07:00:00Z" });
    expect((await sys.tasks.list("acme", { limit: 10 })).tasks).toHaveLength(2);
  });

  it("finishes a run whose first invocation stopped after recording it", async () => {
    const sys = integrateSystem();
    const { schedule_id } = await berlinSchedule(sys);
    const due = "2026-03-29T07:00:00.000Z";
    // What a crash leaves: the run item, not its task.
    await sys.items.put({
      pk: "T#acme",
      sk: `SCHEDRUN#${schedule_id}#${due}`,
      task_id: "tsk_lost",
      started: false,
      ttl: Math.floor(sys.clock.now() / 1000) + 3600,
    });
    const outcome = await sys.schedules.runDue({ tenant_id: "acme", schedule_id, due_at: due });
    expect(outcome.outcome).toBe("started");
    expect((await sys.tasks.list("acme", { limit: 10 })).tasks).toHaveLength(1);
  });

  it("starts nothing for a disabled schedule, and nothing for a deleted one", async () => {
    const sys = integrateSystem();
    const { schedule_id } = await berlinSchedule(sys, false);
    const run = { tenant_id: "acme", schedule_id, due_at: "2026-03-29T07:00:00Z" };
    expect(await sys.schedules.runDue(run)).toEqual({ outcome: "disabled" });
    expect((await sys.schedules.get("acme", schedule_id)).next_run_at).toBeNull();
    await sys.schedules.delete("acme", schedule_id);
    expect(await sys.schedules.runDue(run)).toEqual({ outcome: "gone" });
    expect(sys.scheduler.timers.size).toBe(0);
    expect((await sys.tasks.list("acme", { limit: 10 })).tasks).toHaveLength(0);
  });

  it("updates cron, time zone and enabled, and replaces the timer", async () => {
    const sys = integrateSystem();
    sys.clock.time = Date.parse("2026-01-01T00:00:00Z");
    const { schedule_id } = await berlinSchedule(sys, false);
    const updated = await sys.schedules.update("acme", schedule_id, {
      enabled: true,
      cron: "30 6 * * MON-FRI",
      timezone: "America/New_York",
    });
    expect(updated.next_run_at).toBe("2026-01-01T11:30:00.000Z");
    expect(sys.scheduler.timers.get(`acme/${schedule_id}`)).toMatchObject({
      cron: "30 6 * * MON-FRI",
      timezone: "America/New_York",
      enabled: true,
    });
  });

  it.each([
    [{ cron: "0 9 * *" }, /5 \(minute hour/],
    [{ timezone: "Mars/Olympus" }, /not an IANA time zone/],
    [{ plan: [{ seq_no: 0, type: "assign", parameters: { x: 1 } }] }, /problem/],
  ])("refuses %j with a 422 and writes nothing", async (change, message) => {
    const sys = integrateSystem();
    const input = CreateScheduleInput.parse({ name: "n", cron: "0 9 * * *", plan, ...change });
    await expect(sys.schedules.create("acme", input)).rejects.toThrow(message);
    expect(await sys.schedules.list("acme")).toEqual([]);
    expect(sys.scheduler.timers.size).toBe(0);
  });

  it("lists every tenant's timers for the local scheduler", async () => {
    const sys = integrateSystem();
    await berlinSchedule(sys);
    await sys.schedules.create(
      "other",
      CreateScheduleInput.parse({ name: "n", cron: "* * * * *", plan }),
    );
    expect((await sys.schedules.timers()).map((t) => t.tenant_id).sort()).toEqual([
      "acme",
      "other",
    ]);
  });
});

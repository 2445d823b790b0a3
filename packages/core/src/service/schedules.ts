/**
 * Schedules: a goal or plan started by a 5-field cron in an IANA time zone. The
 * schedule items (`T#{t}` / `SCHEDULE#{id}`, also in the `gsi1` partition
 * `SCHEDULES` so that the local timer finds them all at start) are the source of
 * truth; the scheduler port keeps the timers (EventBridge Scheduler on AWS).
 *
 * `runDue` is what a timer calls. Each due run starts one task, even when the
 * scheduler fires twice for the same due time: a run item
 * (`SCHEDRUN#{id}#{due_at}`) is written on condition it does not exist, the due
 * time being the one the scheduler computed (never this process's clock), and the
 * task id is derived from (schedule, due time), so a retried invocation after a
 * crash finishes the start instead of making a second task.
 */
import { MalformedError, NotFoundError, StackVMError, ValidationError } from "../errors";
import { digest, randomId } from "../ids";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { DueRun, SchedulerPort, ScheduleTimer } from "../ports/scheduler";
import type { ScheduleRecord, ScheduleStore } from "../store/schedule-store";
import { checkTimeZone, nextRunAt, parseCron } from "./cron";
import type { NamespaceService } from "./namespaces";
import type { PlanChecks } from "./plan-checks";
import type { CreateScheduleInput, Schedule, UpdateScheduleInput } from "./schedule-input";
import type { CreateTaskInput } from "./task-input";
import type { TaskStarter } from "./task-starter";

/** What one invocation of the handler did. */
export type RunOutcome =
  | { outcome: "started"; task_id: string }
  | { outcome: "duplicate"; task_id: string }
  | { outcome: "gone" | "disabled" }
  | { outcome: "skipped"; reason: string };

/** How long a run item is kept: far longer than any scheduler retry. */
const RUN_TTL_SECONDS = 7 * 24 * 3600;

export interface ScheduleServiceDeps {
  schedules: ScheduleStore;
  clock: Clock;
  tasks: Pick<TaskStarter, "create">;
  checks: PlanChecks;
  namespaces: NamespaceService;
  scheduler: SchedulerPort;
  log: Log;
}

export class ScheduleService {
  constructor(private readonly deps: ScheduleServiceDeps) {}

  async create(tenant: string, input: CreateScheduleInput): Promise<Schedule> {
    const now = new Date(this.deps.clock.now()).toISOString();
    const id = `sch_${randomId(16)}`;
    const item: ScheduleRecord = {
      tenant_id: tenant,
      schedule_id: id,
      name: input.name,
      cron: input.cron.trim().replace(/\s+/g, " "),
      timezone: input.timezone,
      goal: input.goal ?? null,
      plan: input.plan ?? null,
      namespace: input.namespace,
      enabled: input.enabled,
      inputs: input.inputs ?? {},
      response_format: input.response_format ?? null,
      budget: input.budget ?? null,
      webhook_url: input.webhook_url ?? null,
      metadata: input.metadata ?? {},
      last_run_at: null,
      created_at: now,
      updated_at: now,
    };
    await this.check(item);
    await this.deps.schedules.create(item);
    try {
      await this.deps.scheduler.put(timerOf(item));
    } catch (error) {
      // No schedule without its timer: undo, and let the caller try again.
      await this.deps.schedules.delete(tenant, id);
      throw error;
    }
    return await this.view(item);
  }

  async get(tenant: string, id: string): Promise<Schedule> {
    return await this.view(await this.item(tenant, id));
  }

  async list(tenant: string): Promise<Schedule[]> {
    const items = await this.deps.schedules.list(tenant);
    return Promise.all(items.map((item) => this.view(item)));
  }

  async update(tenant: string, id: string, changes: UpdateScheduleInput): Promise<Schedule> {
    const current = await this.item(tenant, id);
    const next: ScheduleRecord = {
      ...current,
      updated_at: new Date(this.deps.clock.now()).toISOString(),
    };
    for (const [name, value] of Object.entries(changes)) {
      if (value !== undefined) (next as unknown as Record<string, unknown>)[name] = value;
    }
    next.cron = next.cron.trim().replace(/\s+/g, " ");
    if (next.goal === null && next.plan === null) {
      throw new ValidationError("invalid_schedule", "a schedule needs a goal, a plan, or both");
    }
    await this.check(next);
    await this.deps.schedules.replace(next, current.updated_at);
    await this.deps.scheduler.put(timerOf(next));
    return await this.view(next);
  }

  async delete(tenant: string, id: string): Promise<void> {
    await this.item(tenant, id);
    await this.deps.scheduler.delete(tenant, id);
    await this.deps.schedules.delete(tenant, id);
  }

  /** Every schedule's timer, across tenants (for the local timer at start). */
  async timers(): Promise<ScheduleTimer[]> {
    const timers: ScheduleTimer[] = [];
    for await (const item of this.deps.schedules.all()) timers.push(timerOf(item));
    return timers;
  }

  /** Starts the run due at `run.due_at`, once; see the file's comment. */
  async runDue(run: DueRun): Promise<RunOutcome> {
    const due = Date.parse(run.due_at);
    if (Number.isNaN(due)) {
      throw new MalformedError(`due_at '${run.due_at}' is not an ISO-8601 time`);
    }
    // A due time is a whole minute; two firings of one minute must meet on one key.
    const dueAt = new Date(Math.floor(due / 60_000) * 60_000).toISOString();
    const { tenant_id: tenant, schedule_id: id } = run;
    const schedule = await this.deps.schedules.get(tenant, id);
    if (!schedule) return { outcome: "gone" };
    if (!schedule.enabled) return { outcome: "disabled" };

    const taskId = `tsk_${digest("schedule", tenant, id, dueAt).slice(0, 20)}`;
    const nowSeconds = Math.floor(this.deps.clock.now() / 1000);
    const claim = await this.deps.schedules.claimRun(
      tenant,
      id,
      dueAt,
      taskId,
      nowSeconds,
      RUN_TTL_SECONDS,
    );
    if (claim === "started") return { outcome: "duplicate", task_id: taskId };
    // "unfinished": the first invocation stopped before its task was written: finish it.
    let replayed: boolean;
    try {
      ({ replayed } = await this.deps.tasks.create(
        tenant,
        await taskInput(schedule, dueAt),
        taskId,
      ));
    } catch (error) {
      const e = error as StackVMError;
      if (
        !(e instanceof StackVMError) ||
        !["rate_limited", "invalid", "not_found"].includes(e.kind)
      ) {
        throw error;
      }
      // Retrying would not help (the month's budget is spent, the namespace is gone):
      // record the skip and answer, so the scheduler does not retry.
      await this.deps.schedules.markRunStarted(tenant, id, dueAt, e.message);
      this.deps.log.warn("a scheduled run was skipped", {
        tenant_id: tenant,
        schedule_id: id,
        due_at: dueAt,
        reason: e.message,
      });
      return { outcome: "skipped", reason: e.message };
    }
    await this.deps.schedules.markRunStarted(tenant, id, dueAt);
    // Another invocation for the same due time wrote the task first.
    if (replayed) return { outcome: "duplicate", task_id: taskId };
    await this.deps.schedules.setLastRun(tenant, id, dueAt);
    this.deps.log.info("a scheduled run started", {
      tenant_id: tenant,
      schedule_id: id,
      due_at: dueAt,
      task_id: taskId,
    });
    return { outcome: "started", task_id: taskId };
  }

  private async item(tenant: string, id: string): Promise<ScheduleRecord> {
    const item = await this.deps.schedules.get(tenant, id);
    if (!item) throw new NotFoundError("schedule", id);
    return item;
  }

  /** Cron, time zone, namespace and plan must all hold before anything is written. */
  private async check(item: ScheduleRecord): Promise<void> {
    await parseCron(item.cron);
    checkTimeZone(item.timezone);
    if (item.plan === null) {
      this.deps.checks.requireLlm(
        "a schedule with a goal needs one to plan each run",
        "give the schedule a plan instead of a goal",
      );
    }
    const namespace = await this.deps.namespaces.resolve(item.tenant_id, item.namespace);
    if (item.plan !== null)
      await this.deps.checks.validateIn(namespace, item.plan, Object.keys(item.inputs));
    // The same check a task makes (`PlanChecks.checkWebhookUrl`), now rather than at the first run.
    if (item.webhook_url !== null) await this.deps.checks.checkWebhookUrl(item.webhook_url);
  }

  private async view(item: ScheduleRecord): Promise<Schedule> {
    return {
      schedule_id: item.schedule_id,
      name: item.name,
      cron: item.cron,
      timezone: item.timezone,
      goal: item.goal,
      plan: item.plan,
      namespace: item.namespace,
      enabled: item.enabled,
      next_run_at: item.enabled
        ? (await nextRunAt(item.cron, item.timezone, new Date(this.deps.clock.now()))).toISOString()
        : null,
      last_run_at: item.last_run_at ?? null,
      created_at: item.created_at,
      updated_at: item.updated_at,
    };
  }
}

function timerOf(item: ScheduleRecord): ScheduleTimer {
  return {
    tenant_id: item.tenant_id,
    schedule_id: item.schedule_id,
    cron: item.cron,
    timezone: item.timezone,
    enabled: item.enabled,
  };
}

/**
 * The task of one run: the schedule's goal or plan, with `schedule_id` and `due_at`
 * in its metadata; a plan's run takes the schedule's name, its title in lists. The start's
 * schema loads with the first run (no function's start builds it).
 */
async function taskInput(schedule: ScheduleRecord, dueAt: string): Promise<CreateTaskInput> {
  const { CreateTaskInput } = await import("./task-input");
  return CreateTaskInput.parse({
    ...(schedule.goal === null ? { name: schedule.name } : { goal: schedule.goal }),
    ...(schedule.plan === null ? {} : { plan: schedule.plan }),
    namespace: schedule.namespace,
    inputs: schedule.inputs,
    ...(schedule.response_format ? { response_format: schedule.response_format } : {}),
    ...(schedule.budget ? { budget: schedule.budget } : {}),
    ...(schedule.webhook_url ? { webhook_url: schedule.webhook_url } : {}),
    metadata: { ...schedule.metadata, schedule_id: schedule.schedule_id, due_at: dueAt },
  });
}

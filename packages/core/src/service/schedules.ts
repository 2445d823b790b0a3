import {
  isErrorKind,
  MalformedError,
  NotFoundError,
  StackVMError,
  ValidationError,
} from "../errors";
import type { Budget } from "../model";
import type { Clock } from "../ports/clock";
import type { ItemStore } from "../ports/item-store";
import type { DueRun, SchedulerPort, ScheduleTimer } from "../ports/scheduler";
import { tenantPk } from "../store/keys";
import { digest, randomId } from "../vm/ids";
import type { Log } from "../vm/step-deps";
import { checkTimeZone, nextRunAt, parseCron } from "./cron";
import type { NamespaceService } from "./namespaces";
import type { PlanChecks } from "./plan-checks";
import type { CreateScheduleInput, Schedule, UpdateScheduleInput } from "./schedule-input";
import { CreateTaskInput } from "./task-input";
import type { TaskStarter } from "./task-starter";

/** The stored schedule. */
interface ScheduleItem {
  pk: string;
  sk: string;
  gsi1pk: string;
  gsi1sk: string;
  tenant_id: string;
  schedule_id: string;
  name: string;
  cron: string;
  timezone: string;
  goal: string | null;
  plan: unknown[] | null;
  namespace: string;
  enabled: boolean;
  inputs: Record<string, unknown>;
  response_format: Record<string, unknown> | null;
  budget: Budget | null;
  webhook_url: string | null;
  metadata: Record<string, unknown>;
  last_run_at: string | null;
  created_at: string;
  updated_at: string;
}

/** What one invocation of the handler did. */
export type RunOutcome =
  | { outcome: "started"; task_id: string }
  | { outcome: "duplicate"; task_id: string }
  | { outcome: "gone" | "disabled" }
  | { outcome: "skipped"; reason: string };

/** How long a run item is kept: far longer than any scheduler retry. */
const RUN_TTL_SECONDS = 7 * 24 * 3600;
const SCHEDULES_INDEX = "SCHEDULES";

const scheduleKey = (tenant: string, id: string) => ({
  pk: tenantPk(tenant),
  sk: `SCHEDULE#${id}`,
});
const runKey = (tenant: string, id: string, due: string) => ({
  pk: tenantPk(tenant),
  sk: `SCHEDRUN#${id}#${due}`,
});

export interface ScheduleServiceDeps {
  items: ItemStore;
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
    const item: ScheduleItem = {
      ...scheduleKey(tenant, id),
      gsi1pk: SCHEDULES_INDEX,
      gsi1sk: `${tenant}#${id}`,
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
    await this.deps.items.put({ ...item }, { exists: false });
    try {
      await this.deps.scheduler.put(timerOf(item));
    } catch (error) {
      // No schedule without its timer: undo, and let the caller try again.
      await this.deps.items.delete(scheduleKey(tenant, id));
      throw error;
    }
    return await this.view(item);
  }

  async get(tenant: string, id: string): Promise<Schedule> {
    return await this.view(await this.item(tenant, id));
  }

  async list(tenant: string): Promise<Schedule[]> {
    const page = await this.deps.items.query({
      pk: tenantPk(tenant),
      prefix: "SCHEDULE#",
      limit: 1000,
    });
    return Promise.all(page.items.map((item) => this.view(item as unknown as ScheduleItem)));
  }

  async update(tenant: string, id: string, changes: UpdateScheduleInput): Promise<Schedule> {
    const current = await this.item(tenant, id);
    const next: ScheduleItem = {
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
    await this.deps.items.put(
      { ...next },
      { exists: true, equals: { updated_at: current.updated_at } },
    );
    await this.deps.scheduler.put(timerOf(next));
    return await this.view(next);
  }

  async delete(tenant: string, id: string): Promise<void> {
    await this.item(tenant, id);
    await this.deps.scheduler.delete(tenant, id);
    await this.deps.items.delete(scheduleKey(tenant, id));
  }

  /** Every schedule's timer, across tenants (for the local timer at start). */
  async timers(): Promise<ScheduleTimer[]> {
    const timers: ScheduleTimer[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.deps.items.query({
        pk: SCHEDULES_INDEX,
        index: "gsi1",
        limit: 500,
        cursor,
      });
      timers.push(...page.items.map((item) => timerOf(item as unknown as ScheduleItem)));
      cursor = page.cursor;
    } while (cursor);
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
    const schedule = (await this.deps.items.get(
      scheduleKey(tenant, id),
    )) as unknown as ScheduleItem | null;
    if (!schedule) return { outcome: "gone" };
    if (!schedule.enabled) return { outcome: "disabled" };

    const taskId = `tsk_${digest("schedule", tenant, id, dueAt).slice(0, 20)}`;
    const marker = runKey(tenant, id, dueAt);
    const nowSeconds = Math.floor(this.deps.clock.now() / 1000);
    try {
      await this.deps.items.put(
        { ...marker, task_id: taskId, started: false, ttl: nowSeconds + RUN_TTL_SECONDS },
        { exists: false, orExpiredBefore: nowSeconds },
      );
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      const held = await this.deps.items.get(marker);
      if (held?.started === true) return { outcome: "duplicate", task_id: taskId };
      // The first invocation stopped before its task was written: finish it.
    }
    let replayed: boolean;
    try {
      ({ replayed } = await this.deps.tasks.create(tenant, taskInput(schedule, dueAt), taskId));
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
      await this.deps.items.update(marker, {
        set: [
          [["started"], true],
          [["skipped"], e.message],
        ],
      });
      this.deps.log.warn("a scheduled run was skipped", {
        tenant_id: tenant,
        schedule_id: id,
        due_at: dueAt,
        reason: e.message,
      });
      return { outcome: "skipped", reason: e.message };
    }
    await this.deps.items.update(marker, { set: [[["started"], true]] });
    // Another invocation for the same due time wrote the task first.
    if (replayed) return { outcome: "duplicate", task_id: taskId };
    await this.deps.items
      .update(scheduleKey(tenant, id), { set: [[["last_run_at"], dueAt]] }, { exists: true })
      .catch((error: unknown) => {
        if (!isErrorKind(error, "conflict")) throw error;
      });
    this.deps.log.info("a scheduled run started", {
      tenant_id: tenant,
      schedule_id: id,
      due_at: dueAt,
      task_id: taskId,
    });
    return { outcome: "started", task_id: taskId };
  }

  private async item(tenant: string, id: string): Promise<ScheduleItem> {
    const item = await this.deps.items.get(scheduleKey(tenant, id));
    if (!item) throw new NotFoundError("schedule", id);
    return item as unknown as ScheduleItem;
  }

  /** Cron, time zone, namespace and plan must all hold before anything is written. */
  private async check(item: ScheduleItem): Promise<void> {
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
      this.deps.checks.validateIn(namespace, item.plan, Object.keys(item.inputs));
    // The same check a task makes (`PlanChecks.checkWebhookUrl`), now rather than at the first run.
    if (item.webhook_url !== null) await this.deps.checks.checkWebhookUrl(item.webhook_url);
  }

  private async view(item: ScheduleItem): Promise<Schedule> {
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

function timerOf(item: ScheduleItem): ScheduleTimer {
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
 * in its metadata; a plan's run takes the schedule's name, its title in lists.
 */
function taskInput(schedule: ScheduleItem, dueAt: string): CreateTaskInput {
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

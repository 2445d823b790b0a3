/**
 * The local adapter of the scheduler port: one timer per enabled schedule, which
 * fires the due run into the same handler that EventBridge Scheduler invokes on
 * AWS (`createScheduleHandler`), with the due time it computed.
 *
 * As on EventBridge, runs missed while the process was not running (or asleep)
 * are not caught up: after a run the next timer is set after whichever is later,
 * the due time or now. Timers do not keep the process alive.
 */
import {
  type DueRun,
  type Log,
  nextRunAt,
  type SchedulerPort,
  type ScheduleTimer,
} from "@stackvm/core";

/** setTimeout's longest delay (about 24.8 days); a later run is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export interface LocalSchedulerOptions {
  /** Starts a due run: the scheduler function's handler. */
  fire: (run: DueRun) => Promise<unknown>;
  log: Log;
}

interface Armed {
  timer: ScheduleTimer;
  handle: ReturnType<typeof setTimeout> | null;
}

export class LocalScheduler implements SchedulerPort {
  readonly #armed = new Map<string, Armed>();
  #stopped = false;

  constructor(private readonly options: LocalSchedulerOptions) {}

  async put(timer: ScheduleTimer): Promise<void> {
    const key = keyOf(timer.tenant_id, timer.schedule_id);
    this.#clear(key);
    const armed: Armed = { timer, handle: null };
    this.#armed.set(key, armed);
    if (timer.enabled) this.#arm(key, armed, Date.now());
  }

  async delete(tenantId: string, scheduleId: string): Promise<void> {
    const key = keyOf(tenantId, scheduleId);
    this.#clear(key);
    this.#armed.delete(key);
  }

  /** Arms the schedules that exist at start (from `ScheduleService.timers()`). */
  async load(timers: ScheduleTimer[]): Promise<void> {
    for (const timer of timers) await this.put(timer);
  }

  /** The next due time of each armed schedule (for logs and tests). */
  pending(): Array<{ tenant_id: string; schedule_id: string; due_at: string }> {
    return [...this.#armed.values()]
      .filter((a) => a.timer.enabled)
      .map((a) => ({
        tenant_id: a.timer.tenant_id,
        schedule_id: a.timer.schedule_id,
        due_at: nextRunAt(a.timer.cron, a.timer.timezone, new Date()).toISOString(),
      }));
  }

  /** Clears every timer; nothing fires after this. */
  stop(): void {
    this.#stopped = true;
    for (const key of this.#armed.keys()) this.#clear(key);
  }

  #arm(key: string, armed: Armed, after: number): void {
    if (this.#stopped) return;
    const due = nextRunAt(armed.timer.cron, armed.timer.timezone, new Date(after)).getTime();
    const wait = due - Date.now();
    const step = () => {
      if (this.#armed.get(key) !== armed) return;
      if (Date.now() < due) {
        // A delay past setTimeout's limit: wait again for the rest.
        armed.handle = setTimeout(step, Math.min(due - Date.now(), MAX_DELAY_MS));
        armed.handle.unref?.();
        return;
      }
      this.#arm(key, armed, Math.max(due, Date.now()));
      const run = {
        tenant_id: armed.timer.tenant_id,
        schedule_id: armed.timer.schedule_id,
        due_at: new Date(due).toISOString(),
      };
      this.options.fire(run).catch((error: unknown) => {
        this.options.log.error("a scheduled run failed to start", {
          ...run,
          error: (error as Error).message,
        });
      });
    };
    armed.handle = setTimeout(step, Math.max(0, Math.min(wait, MAX_DELAY_MS)));
    armed.handle.unref?.();
  }

  #clear(key: string): void {
    const armed = this.#armed.get(key);
    if (armed?.handle) clearTimeout(armed.handle);
    if (armed) armed.handle = null;
  }
}

const keyOf = (tenantId: string, scheduleId: string) => `${tenantId}/${scheduleId}`;

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
  type Clock,
  type CronReader,
  cronReader,
  type DueRun,
  type Log,
  type SchedulerPort,
  type ScheduleTimer,
  systemClock,
  type Wake,
  type WakePort,
} from "@stackvm/core";

/** setTimeout's longest delay (about 24.8 days); a later run is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export interface LocalSchedulerOptions {
  /** Starts a due run: the scheduler function's handler. */
  fire: (run: DueRun) => Promise<unknown>;
  log: Log;
  /** Sends a due wake of a waiting branch (`sendWake` on the step queue). */
  wake?: (wake: Wake) => Promise<unknown>;
  /** The clock wakes are due by (tests move it instead of sleeping). */
  clock?: Clock;
  /** How often due wakes are looked for (default 1 s). */
  wakePollMs?: number;
}

interface Armed {
  timer: ScheduleTimer;
  handle: ReturnType<typeof setTimeout> | null;
}

export class LocalScheduler implements SchedulerPort, WakePort {
  readonly #armed = new Map<string, Armed>();
  /** One-time wakes by wait id, as EventBridge one-time schedules (kept in memory: the sweep sends a wake lost to a restart). */
  readonly #wakes = new Map<string, Wake>();
  #wakeTimer: ReturnType<typeof setInterval> | null = null;
  #stopped = false;
  /** Loaded by the first `put` (cron-parser loads on first use); every armed timer was put. */
  #cron: CronReader | null = null;

  constructor(private readonly options: LocalSchedulerOptions) {}

  async wakeAt(wake: Wake): Promise<void> {
    if (this.#stopped) return;
    this.#wakes.set(wake.wait_id, wake);
    if (this.#wakeTimer) return;
    this.#wakeTimer = setInterval(() => this.fireDueWakes(), this.options.wakePollMs ?? 1000);
    this.#wakeTimer.unref?.();
  }

  /** Sends every wake due by the clock, once (a failed send is tried again next time). */
  fireDueWakes(): void {
    const now = (this.options.clock ?? systemClock).now();
    for (const [id, wake] of this.#wakes) {
      if (Date.parse(wake.at) > now) continue;
      this.#wakes.delete(id);
      (this.options.wake?.(wake) ?? Promise.resolve()).catch((error: unknown) => {
        this.#wakes.set(id, wake);
        this.options.log.error("a wake failed to send", {
          ...wake,
          error: (error as Error).message,
        });
      });
    }
  }

  /** The wakes not yet sent (for tests). */
  pendingWakes(): Wake[] {
    return [...this.#wakes.values()];
  }

  async put(timer: ScheduleTimer): Promise<void> {
    this.#cron ??= await cronReader();
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
        due_at: this.#nextRunAt(a.timer, new Date()).toISOString(),
      }));
  }

  /** Clears every timer; nothing fires after this. */
  stop(): void {
    this.#stopped = true;
    for (const key of this.#armed.keys()) this.#clear(key);
    if (this.#wakeTimer) clearInterval(this.#wakeTimer);
  }

  #arm(key: string, armed: Armed, after: number): void {
    if (this.#stopped) return;
    const due = this.#nextRunAt(armed.timer, new Date(after)).getTime();
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

  #nextRunAt(timer: ScheduleTimer, after: Date): Date {
    if (!this.#cron) throw new Error("a timer was armed before put loaded the cron reader");
    return this.#cron.nextRunAt(timer.cron, timer.timezone, after);
  }

  #clear(key: string): void {
    const armed = this.#armed.get(key);
    if (armed?.handle) clearTimeout(armed.handle);
    if (armed) armed.handle = null;
  }
}

const keyOf = (tenantId: string, scheduleId: string) => `${tenantId}/${scheduleId}`;

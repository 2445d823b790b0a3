/**
 * The scheduler port: keeps one timer per tenant schedule outside the process.
 * On AWS each schedule is an EventBridge Scheduler schedule (`EventBridgeScheduler`
 * in @stackvm/aws); locally a timer (`LocalScheduler` in @stackvm/local). Either
 * way, when a run is due it calls the same handler with
 * `{ tenant_id, schedule_id, due_at }`, and the handler starts that run once
 * (`ScheduleService.runDue`). The schedule items in the store stay the source of
 * truth: the port only holds timers.
 */

/** What a timer needs to know about a schedule. */
export interface ScheduleTimer {
  tenant_id: string;
  schedule_id: string;
  /** Five fields: minute hour day-of-month month day-of-week. */
  cron: string;
  /** IANA time zone the cron is read in. */
  timezone: string;
  enabled: boolean;
}

/** What a due run hands to the handler. */
export interface DueRun {
  tenant_id: string;
  schedule_id: string;
  /** The due time the scheduler computed (not the clock of the handler): ISO-8601. */
  due_at: string;
}

export interface SchedulerPort {
  /** Creates or replaces the timer of a schedule (a disabled one fires nothing). */
  put(timer: ScheduleTimer): Promise<void>;
  /** Removes the timer; removing one that does not exist is not an error. */
  delete(tenantId: string, scheduleId: string): Promise<void>;
}

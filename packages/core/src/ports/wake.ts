/**
 * Timers for waits longer than the queue can delay a message (the step's wake).
 */

/** One wake: "run the step after `head`" for a waiting branch, at `at`. */
export interface Wake {
  tenant_id: string;
  task_id: string;
  branch: string;
  head: string | null;
  wait_id: string;
  /** ISO 8601. */
  at: string;
}

/**
 * Sends wakes later than the queue can delay them. On AWS an EventBridge
 * Scheduler one-time schedule (deleted after it fires); locally the local
 * scheduler. At `at` it calls `sendWake` (the scheduler function's handler).
 */
export interface WakePort {
  /** Creates the timer; one with the same `wait_id` already set is not an error. */
  wakeAt(wake: Wake): Promise<void>;
}

/**
 * The statuses of tasks and branches, as the console lists and tests them:
 * core's plain values (`@stackvm/core/model-values`), which carry no schema, so
 * the browser bundle takes them without zod.
 */
export {
  /** Every status, in the order of a task's life: the task list's filter shows them so. */
  STATUSES,
  /**
   * The statuses after which nothing changes any more; anything else is live.
   *
   * @example
   * const running = !TERMINAL.has(task.status);
   */
  TERMINAL_STATUSES as TERMINAL,
} from "@stackvm/core/model-values";

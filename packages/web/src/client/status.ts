/**
 * The statuses of tasks and branches, as the console lists and tests them. Core's
 * `Status` schema and `TERMINAL_STATUSES` say the same, but they are runtime values
 * and would pull zod into the browser bundle, so only the type comes from core
 * (the type checks that these stay within it).
 */
import type { Status } from "@stackvm/core";

/** Every status, in the order of a task's life: the task list's filter shows them so. */
export const STATUSES: readonly Status[] = [
  "queued",
  "running",
  "waiting",
  "completed",
  "failed",
  "cancelled",
];

/**
 * The statuses after which nothing changes any more; anything else is live.
 *
 * @example
 * const running = !TERMINAL.has(task.status);
 */
export const TERMINAL: ReadonlySet<Status> = new Set(["completed", "failed", "cancelled"]);

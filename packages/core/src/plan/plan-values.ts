/**
 * The plan language's plain values and checks that the step path reads (the
 * longest wait, a zoned time, the name that ends a branch), apart from
 * `schema.ts`, whose schemas a worker's cold start does not build. `schema.ts`
 * re-exports them.
 */

/** The longest `wait` in seconds: a year. */
export const MAX_WAIT_SECONDS = 365 * 24 * 60 * 60;

/** Why a number of seconds cannot be waited, or null. */
export function waitSecondsProblem(seconds: number): string | null {
  if (!Number.isFinite(seconds) || seconds < 0) return "it is not a number of seconds";
  if (seconds > MAX_WAIT_SECONDS) {
    return `it is more than ${MAX_WAIT_SECONDS} seconds (a year), the longest a wait may be`;
  }
  return null;
}

const ZONED =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-](\d{2}):(\d{2}))$/;

/** An ISO 8601 date-time that says its zone (`Z` or an offset): no guess of local time. */
export function hasZone(text: string): boolean {
  return ZONED.test(text);
}

/**
 * The epoch milliseconds of an ISO 8601 date-time with its zone, or NaN when it
 * is not one or names a day or time that does not exist (`2026-02-30`, `24:00`,
 * an offset past 23:59): `Date.parse` rolls those over to another day.
 *
 * @example
 * zonedTime("2026-02-30T09:00:00Z") // NaN
 */
export function zonedTime(text: string): number {
  const m = ZONED.exec(text);
  if (!m) return Number.NaN;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? "0"].map(
    Number,
  ) as [number, number, number, number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const exists =
    calendar.getUTCFullYear() === year &&
    calendar.getUTCMonth() === month - 1 &&
    calendar.getUTCDate() === day &&
    calendar.getUTCHours() === hour &&
    calendar.getUTCMinutes() === minute &&
    calendar.getUTCSeconds() === second &&
    Number(m[9] ?? 0) <= 23 &&
    Number(m[10] ?? 0) <= 59;
  return exists ? Date.parse(text) : Number.NaN;
}

/** The most instructions a plan may have. */
export const MAX_PLAN_LENGTH = 500;

/** The name that ends a branch when an instruction sets it. */
export const FINAL_ANSWER = "final_answer";

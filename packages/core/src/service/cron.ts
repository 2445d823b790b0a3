/**
 * Five-field cron (`minute hour day-of-month month day-of-week`) read in an IANA
 * time zone, with daylight-saving changes handled by `cron-parser`. The accepted
 * syntax is the part that both the local timer and EventBridge Scheduler can run
 * the same way: numbers, month and day names, `*`, `,`, `-` and `/`; and at most
 * one of day-of-month and day-of-week restricted (EventBridge cannot say "the 1st
 * or a Monday", which classic cron means when both are given).
 *
 * `cron-parser` (and luxon under it, about 100 KB) loads on the first cron read,
 * not when this module does: the step worker, which never reads one, builds the
 * schedule service and would otherwise load both at every cold start.
 */
import type { CronExpressionParser } from "cron-parser";
import { ValidationError } from "../errors";

const FIELD_NAMES = ["minute", "hour", "day-of-month", "month", "day-of-week"] as const;
const FIELD = /^[0-9A-Za-z*,/-]+$/;

/** A checked expression: its five fields as written and the days of week it allows (0 = Sunday). */
export interface CronFields {
  minute: string;
  hour: string;
  dayOfMonth: string;
  month: string;
  dayOfWeek: string;
  /** The days of week, expanded: 0 (Sunday) to 6. */
  daysOfWeek: number[];
}

/** True for a time zone name the runtime knows (`Europe/Berlin`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return /^[A-Za-z0-9_+\-/]+$/.test(zone);
  } catch {
    return false;
  }
}

/** Reads cron expressions once cron-parser is loaded: every function synchronous. */
export interface CronReader {
  /** Checks an expression; `ValidationError` (422) that says what is wrong. */
  parse(expression: string): CronFields;
  /** The first due time strictly after `after`, in UTC. */
  nextRunAt(expression: string, timeZone: string, after: Date): Date;
}

type Parser = typeof CronExpressionParser;
let loading: Promise<CronReader> | undefined;

/** The cron reader, loading cron-parser on the first call (a failed load is tried again next time). */
export function cronReader(): Promise<CronReader> {
  loading ??= import("cron-parser").then(
    ({ CronExpressionParser: parser }) => ({
      parse: (expression) => parseWith(parser, expression),
      nextRunAt: (expression, timeZone, after) => nextRunWith(parser, expression, timeZone, after),
    }),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Checks an expression; `ValidationError` (422) that says what is wrong. */
export async function parseCron(expression: string): Promise<CronFields> {
  return (await cronReader()).parse(expression);
}

function parseWith(parser: Parser, expression: string): CronFields {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) {
    throw new ValidationError(
      "invalid_cron",
      `'${expression}' has ${fields.length} field(s): a schedule takes 5 (minute hour day-of-month month day-of-week), e.g. '0 9 * * 1-5' for 09:00 on weekdays`,
    );
  }
  fields.forEach((field, i) => {
    // Letters only as three-letter month and day names: no `L`, `W` or `H` extensions.
    const withoutNames = field.replace(/(^|[^A-Za-z])[A-Za-z]{3}(?![A-Za-z])/g, "$1");
    if (!FIELD.test(field) || /[A-Za-z]/.test(withoutNames)) {
      throw new ValidationError(
        "invalid_cron",
        `the ${FIELD_NAMES[i]} field '${field}' may only use numbers, names (JAN, MON), '*', ',', '-' and '/'`,
      );
    }
  });
  const [minute, hour, dayOfMonth, month, dayOfWeek] = fields as [
    string,
    string,
    string,
    string,
    string,
  ];
  if (dayOfMonth !== "*" && dayOfWeek !== "*") {
    throw new ValidationError(
      "invalid_cron",
      `'${expression}' restricts both day-of-month and day-of-week: give one of them and '*' for the other (EventBridge Scheduler, which runs schedules on AWS, cannot combine them)`,
    );
  }
  let parsed: ReturnType<Parser["parse"]>;
  try {
    parsed = parser.parse(fields.join(" "));
  } catch (error) {
    throw new ValidationError(
      "invalid_cron",
      `'${expression}' is not a valid cron expression: ${(error as Error).message}`,
    );
  }
  const days = new Set(parsed.fields.dayOfWeek.values.map((d) => Number(d) % 7));
  return { minute, hour, dayOfMonth, month, dayOfWeek, daysOfWeek: [...days].sort() };
}

/** Checks a time zone; `ValidationError` (422) when the runtime does not know it. */
export function checkTimeZone(zone: string): void {
  if (!isTimeZone(zone)) {
    throw new ValidationError(
      "invalid_timezone",
      `'${zone}' is not an IANA time zone: use a name such as 'UTC', 'Europe/Berlin' or 'America/New_York'`,
    );
  }
}

/**
 * The first due time strictly after `after`, in UTC.
 *
 * @example
 * await nextRunAt("0 9 * * *", "Europe/Berlin", new Date("2026-03-28T12:00:00Z")) // 2026-03-29T07:00:00.000Z (summer time)
 */
export async function nextRunAt(expression: string, timeZone: string, after: Date): Promise<Date> {
  return (await cronReader()).nextRunAt(expression, timeZone, after);
}

function nextRunWith(parser: Parser, expression: string, timeZone: string, after: Date): Date {
  parseWith(parser, expression);
  checkTimeZone(timeZone);
  return parser.parse(expression.trim(), { currentDate: after, tz: timeZone }).next().toDate();
}

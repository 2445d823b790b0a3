/**
 * How a case's answer is scored. Every checker but the judge is a pure function
 * of the task's end (its `final_answer` or its `error`); the judge asks a model
 * with a rubric (`judge.ts`). `path` picks a key of a JSON answer first
 * (`"total"`, `"items.0.name"`).
 */
import * as z from "zod";

const path = z.string().min(1).optional().describe("a dotted path into a JSON answer");

export const ExactChecker = z
  .object({
    exact: z.unknown().refine((v) => v !== undefined, "exact needs the expected value"),
    ignore_case: z.boolean().optional(),
    path,
  })
  .strict();
export const NumberChecker = z
  .object({ number: z.number(), tolerance: z.number().min(0).default(0), path })
  .strict();
export const RegexChecker = z
  .object({
    regex: z.string().min(1),
    flags: z
      .string()
      .regex(/^[imsu]*$/)
      .optional(),
    path,
  })
  .strict();
export const ContainsChecker = z
  .object({
    contains: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    ignore_case: z.boolean().optional(),
    path,
  })
  .strict();
export const JudgeChecker = z
  .object({ judge: z.string().min(1).describe("the rubric the judge grades against") })
  .strict();
export const ErrorChecker = z
  .object({ error: z.string().min(1).describe("a regular expression over the task's error") })
  .strict();

/** One checker: which key it has says its kind. */
export const Checker = z.union([
  ExactChecker,
  NumberChecker,
  RegexChecker,
  ContainsChecker,
  JudgeChecker,
  ErrorChecker,
]);
export type Checker = z.infer<typeof Checker>;

/** What a checker reads of a finished task. */
export interface Outcome {
  status: string;
  final_answer: unknown;
  /** The task's error as the API gives it (text or an object), or null. */
  error: unknown;
}

/** A verdict: right or not, and in a few words why. */
export interface Verdict {
  right: boolean;
  reason: string;
}

/** The kind of a checker, as the table names it. */
export function checkerKind(checker: Checker): string {
  for (const kind of ["exact", "number", "regex", "contains", "judge", "error"]) {
    if (kind in checker) return kind;
  }
  throw new Error(`unknown checker ${JSON.stringify(checker)}`);
}

/**
 * Scores an outcome with every checker but the judge (which needs a model:
 * `judge.ts`). A task that did not end as expected is wrong whatever its answer.
 *
 * @example
 * check({ number: 42, tolerance: 0.5 }, { status: "completed", final_answer: "It is 42.", error: null })
 * // { right: true, reason: "42 is within 0.5 of 42" }
 */
export function check(checker: Exclude<Checker, { judge: string }>, outcome: Outcome): Verdict {
  if ("error" in checker) {
    if (outcome.status !== "failed")
      return { right: false, reason: `expected a failure, got ${outcome.status}` };
    const text = typeof outcome.error === "string" ? outcome.error : JSON.stringify(outcome.error);
    const right = new RegExp(checker.error, "s").test(text ?? "");
    return {
      right,
      reason: right
        ? `the error matches /${checker.error}/`
        : `the error does not match /${checker.error}/: ${clip(text)}`,
    };
  }
  if (outcome.status !== "completed") {
    const why =
      typeof outcome.error === "string" && outcome.error ? `: ${clip(outcome.error)}` : "";
    return { right: false, reason: `the task ended ${outcome.status}${why}` };
  }
  const picked = pick(outcome.final_answer, checker.path);
  if (!picked.found) return { right: false, reason: `the answer has no ${checker.path}` };
  const value = picked.value;
  if ("exact" in checker) return exact(checker.exact, value, checker.ignore_case === true);
  if ("number" in checker) return number(checker.number, checker.tolerance, value);
  if ("regex" in checker) {
    const right = new RegExp(checker.regex, checker.flags).test(asText(value));
    return {
      right,
      reason: `${right ? "matches" : "does not match"} /${checker.regex}/${checker.flags ?? ""}: ${clip(asText(value))}`,
    };
  }
  const needles = typeof checker.contains === "string" ? [checker.contains] : checker.contains;
  const fold = (s: string) => (checker.ignore_case ? s.toLowerCase() : s);
  const text = fold(asText(value));
  const missing = needles.filter((n) => !text.includes(fold(n)));
  return missing.length === 0
    ? { right: true, reason: `contains ${needles.map((n) => JSON.stringify(n)).join(", ")}` }
    : {
        right: false,
        reason: `lacks ${missing.map((n) => JSON.stringify(n)).join(", ")}: ${clip(asText(value))}`,
      };
}

function exact(expected: unknown, value: unknown, ignoreCase: boolean): Verdict {
  const norm = (v: unknown) => {
    if (typeof v !== "string") return JSON.stringify(canonical(v));
    const trimmed = v.trim();
    return JSON.stringify(ignoreCase ? trimmed.toLowerCase() : trimmed);
  };
  const right = norm(expected) === norm(value);
  return {
    right,
    reason: right
      ? "equal"
      : `expected ${clip(JSON.stringify(expected))}, got ${clip(JSON.stringify(value))}`,
  };
}

function number(expected: number, tolerance: number, value: unknown): Verdict {
  const found = numberIn(value);
  if (found === null) return { right: false, reason: `no number in ${clip(asText(value))}` };
  const right = Math.abs(found - expected) <= tolerance;
  return {
    right,
    reason: `${found} is ${right ? "within" : "not within"} ${tolerance} of ${expected}`,
  };
}

/**
 * The number an answer gives: the value itself, or in text the last number
 * written ("The total is 1,234.5." gives 1234.5), since models tend to end with
 * the result.
 */
export function numberIn(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "string") return null;
  const all = value.match(/-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?|-?\.\d+/gi);
  if (!all) return null;
  const last = Number(all.at(-1)!.replace(/,/g, ""));
  return Number.isFinite(last) ? last : null;
}

/** The value at a dotted path of a JSON answer (text that is JSON is read as such). */
function pick(value: unknown, at: string | undefined): { found: boolean; value: unknown } {
  if (at === undefined) return { found: true, value };
  let current: unknown = value;
  if (typeof current === "string") {
    try {
      current = JSON.parse(current);
    } catch {
      return { found: false, value: undefined };
    }
  }
  for (const key of at.split(".")) {
    if (current === null || typeof current !== "object" || !(key in current))
      return { found: false, value: undefined };
    current = (current as Record<string, unknown>)[key];
  }
  return { found: true, value: current };
}

/** Object keys in order, so that `{"a":1,"b":2}` equals `{"b":2,"a":1}`. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  );
}

/** An answer as text: a string as it is, anything else as JSON. */
export function asText(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "");
}

function clip(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
import { describe, expect, it } from "vitest";
import type { Lookup } from "../plan/references";
import { MAX_WAIT_SECONDS, WaitInstruction } from "../plan/schema";
import { validatePlan } from "../plan/validate";
import { context, done, problemsOf } from "../testing/plan-fixtures";
import { WaitRequest } from "../tools/tool";
import { runWait } from "./wait";

const NOW = Date.parse("2026-03-01T00:00:00Z");
const lookup = (vars: Record<string, unknown>): Lookup =>
  ((name: string) =>
    Object.hasOwn(vars, name) ? { found: true, value: vars[name] } : { found: false }) as Lookup;

function waitFor(parameters: Record<string, unknown>, vars: Record<string, unknown> = {}) {
  const instruction = WaitInstruction.parse({ seq_no: 0, type: "wait", parameters });
  try {
    runWait(instruction, lookup(vars), { now: NOW });
    return { done: true } as const;
  } catch (error) {
    if (error instanceof WaitRequest) return { until: error.spec.until } as const;
    return { error: error as { code: string; message: string } } as const;
  }
}

describe("wait's bounds", () => {
  it.each([
    ["seconds as text past the year", { seconds: "1e9" }],
    ["seconds as text that is no number", { seconds: "soon" }],
    ["a day that does not exist", { until: "2026-02-30T09:00:00Z" }],
    ["an hour that does not exist", { until: "2026-03-02T24:00:00Z" }],
    ["an offset that does not exist", { until: "2026-03-02T09:00:00+24:00" }],
  ])("refuses %s when the plan is checked", (_what, parameters) => {
    const plan = [{ seq_no: 0, type: "wait", parameters }, done(1, "x")];
    const problems = problemsOf(validatePlan(plan, context));
    expect(problems.map((p) => p.seq_no)).toContain(0);
  });

  it.each([
    ["seconds by reference past the year", { seconds: "${s}" }, { s: 1e9 }, "a year"],
    ["seconds by reference as text past the year", { seconds: "${s}" }, { s: "1e9" }, "a year"],
    [
      "a time by reference past the year",
      { until: "${u}" },
      { u: "9999-12-31T00:00:00Z" },
      "more than a year away",
    ],
    [
      "a time written past the year",
      { until: "9999-12-31T23:59:59Z" },
      {},
      "more than a year away",
    ],
    [
      "a day by reference that does not exist",
      { until: "${u}" },
      { u: "2026-02-30T09:00:00Z" },
      "exists",
    ],
  ])("fails the step with bad_wait for %s", (_what, parameters, vars, reason) => {
    const outcome = waitFor(parameters, vars);
    expect(outcome.error?.code).toBe("bad_wait");
    expect(outcome.error?.message).toContain(reason);
  });

  it("waits a year to the second, and until a time within it written in another zone", () => {
    expect(waitFor({ seconds: MAX_WAIT_SECONDS }).until).toBe(
      new Date(NOW + MAX_WAIT_SECONDS * 1000).toISOString(),
    );
    expect(waitFor({ until: "2027-02-28T12:00:00+01:00" }).until).toBe("2027-02-28T11:00:00.000Z");
    expect(waitFor({ until: "2026-12-31T23:59:59Z" }).until).toBe("2026-12-31T23:59:59.000Z");
  });
});

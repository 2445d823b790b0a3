/**
 * The eval's checkers, its case loader and its comparison of two runs: pure
 * functions, checked without a stack.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { check, numberIn, type Outcome } from "./checkers";
import { fillPlaceholders, loadCases } from "./dataset";
import type { CaseResult } from "./metrics";
import { totalsOf } from "./metrics";
import { compareTable, type EvalRun, modesTable } from "./report";

const done = (final_answer: unknown): Outcome => ({
  status: "completed",
  final_answer,
  error: null,
});

describe("checkers", () => {
  it.each([
    [{ exact: "Hello, Ada!" }, " Hello, Ada!\n", true],
    [{ exact: "Hello, Ada!" }, "hello, ada!", false],
    [{ exact: "hello, ada!", ignore_case: true }, "Hello, Ada!", true],
    [{ exact: { a: 1, b: [2] } }, { b: [2], a: 1 }, true],
    [{ exact: [9, 7] }, [7, 9], false],
    [{ number: 42, tolerance: 0 }, "The answer is 42.", true],
    [{ number: 1234.5, tolerance: 0 }, "It costs 1,234.5 euros", true],
    [{ number: 42, tolerance: 0.5 }, 42.4, true],
    [{ number: 42, tolerance: 0.5 }, "41", false],
    [{ number: 3, tolerance: 0 }, "no digits here", false],
    [{ number: 34, tolerance: 0, path: "age" }, { name: "M", age: 34 }, true],
    [{ number: 34, tolerance: 0, path: "age" }, '{"age": 34}', true],
    [{ number: 34, tolerance: 0, path: "years" }, { age: 34 }, false],
    [{ regex: "^\\W*canberra\\W*$", flags: "i" }, "Canberra.", true],
    [{ regex: "^\\W*canberra\\W*$", flags: "i" }, "Sydney, not Canberra", false],
    [{ contains: ["Katze", "gatto"] }, "German: Katze, Italian: gatto", true],
    [{ contains: ["Katze", "gatto"] }, "German: Katze", false],
    [{ contains: "GREEN", ignore_case: true }, "dark green", true],
  ])("%j against %j is %s", (checker, answer, right) => {
    expect(check(checker as never, done(answer)).right).toBe(right);
  });

  it("scores a task that did not complete wrong whatever its answer", () => {
    const verdict = check({ exact: "x" }, { status: "failed", final_answer: "x", error: "boom" });
    expect(verdict).toEqual({ right: false, reason: "the task ended failed: boom" });
  });

  it("scores an expected failure by its error, and a completion as wrong", () => {
    const budget = { error: "budget|max_steps" };
    expect(
      check(budget, {
        status: "failed",
        final_answer: null,
        error: "[budget_exceeded] max_steps 6",
      }).right,
    ).toBe(true);
    expect(
      check(budget, { status: "failed", final_answer: null, error: "[host_not_allowed] x" }).right,
    ).toBe(false);
    expect(check(budget, done("1000")).reason).toBe("expected a failure, got completed");
  });

  it("reads the last number of a text", () => {
    expect(numberIn("6 × 7 = 42")).toBe(42);
    expect(numberIn("-3.5 degrees")).toBe(-3.5);
    expect(numberIn({ n: 1 })).toBeNull();
  });
});

describe("the case loader", () => {
  async function file(cases: unknown): Promise<string> {
    const path = join(await mkdtemp(join(tmpdir(), "eval-cases-")), "cases.json");
    await writeFile(path, JSON.stringify(cases));
    return path;
  }
  const good = { id: "one", feature: "assign", goal: "Say one.", check: { exact: "one" } };

  it("refuses a case with a typo in its checker, naming the case", async () => {
    const path = await file([{ ...good, check: { exactly: "one" } }]);
    await expect(loadCases(path)).rejects.toThrow(/case one:/);
  });

  it("refuses an id used twice", async () => {
    await expect(loadCases(await file([good, good]))).rejects.toThrow(
      "case id 'one' is used twice",
    );
  });

  it("fills the fixture server's URL everywhere, and refuses a placeholder it has no value for", async () => {
    const [c] = await loadCases(await file([{ ...good, goal: "GET {{fixture_url}}/rates" }]));
    expect(fillPlaceholders(c!, { fixture_url: "http://127.0.0.1:9" }).goal).toBe(
      "GET http://127.0.0.1:9/rates",
    );
    expect(() => fillPlaceholders(c!, {})).toThrow("no value for {{fixture_url}}");
  });
});

describe("comparing two runs", () => {
  const row = (id: string, right: boolean, llm_calls: number): CaseResult => ({
    id,
    feature: "assign",
    planning: "up_front",
    checker: "exact",
    kind: "goal",
    status: "completed",
    completed: true,
    right,
    reason: "",
    plan_first_try: true,
    plan_attempts: 1,
    plan_updates: 0,
    steps: 2,
    llm_calls,
    input_tokens: 100,
    output_tokens: 10,
    cost_usd: 0,
    wall_ms: 1500,
    task_id: "tsk_1",
  });
  const run = (label: string, results: CaseResult[]): EvalRun => ({
    version: 1,
    run_id: label,
    label,
    llm: null,
    stack: "test",
    started_at: "2026-11-27T08:00:00.000Z",
    finished_at: "2026-11-27T08:01:00.000Z",
    totals: totalsOf(results),
    results,
  });

  it("shows each case's figures side by side, what changed, and the totals' change", () => {
    const table = compareTable(
      run("small-model", [row("a", true, 1), row("b", false, 3)]),
      run("big-model", [row("a", true, 1), row("b", true, 2), row("c", true, 1)]),
    );
    expect(table).toContain("A: small-model");
    expect(table).toMatch(
      /b\s+no \| yes\s+yes \| yes\s+yes \| yes\s+3 \| 2\s+110 \| 110\s+1\.5 \| 1\.5\s+now right/,
    );
    expect(table).toMatch(/c\s+- \| yes/);
    expect(table).toMatch(/TOTAL\s+1\/2 \| 3\/3 \(\+2\)/);
  });

  it("shows both planning modes side by side: solved, steps, calls, tokens, and why a mode missed", () => {
    const adaptive = (r: CaseResult, change: Partial<CaseResult>): CaseResult => ({
      ...r,
      planning: "adaptive",
      ...change,
    });
    const up = [row("a", true, 1), { ...row("b", false, 1), reason: "0 is not within 0 of 12" }];
    const ad = [
      adaptive(row("a", true, 2), { plan_updates: 1 }),
      adaptive(row("b", true, 2), { steps: 3, plan_updates: 1, input_tokens: 300 }),
    ];
    const table = modesTable(up, ad);
    expect(table).toMatch(/solved up \| ad\s+steps up \| ad/);
    expect(table).toMatch(
      /b\s+no \| yes\s+2 \| 3\s+0 \| 1\s+1 \| 2\s+110 \| 310\s+up front: completed: 0 is not within 0 of 12/,
    );
    expect(table).toMatch(/TOTAL\s+1\/2 \| 2\/2\s+4 \| 5\s+0 \| 2\s+2 \| 4\s+220 \| 420/);
    expect(table).toContain("solved only adaptive: b\nsolved only up front: none");
  });
});

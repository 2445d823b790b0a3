/**
 * `npm run eval` over the whole dataset against the scripted LLM, on one
 * in-process stack with every case at once, planned up front and then
 * adaptively: each case is right (up front, all but the three whose next action
 * depends on a result), the numbers read from the tasks add up in each mode,
 * the side-by-side table shows both, and a twin of a case whose scripted answer
 * is wrong is scored wrong by its checker (one twin per kind of checker).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvalCase, fillPlaceholders, loadCases } from "./dataset";
import { type EvalStack, startEvalStack } from "./local";
import { type CaseResult, totalsOf } from "./metrics";
import { modesTable, runTable } from "./report";
import { runCases } from "./runner";

/** A copy of a case under another id and goal (the goal routes its requests), with other answers. */
function twin(
  c: EvalCase,
  scripted: EvalCase["scripted"],
  change: Partial<EvalCase> = {},
): EvalCase {
  return { ...c, id: `${c.id}-wrong`, goal: `${c.goal} (a wrong twin)`, scripted, ...change };
}

/** One twin per checker kind, each given an answer its checker must refuse. */
function wrongTwins(cases: EvalCase[]): EvalCase[] {
  const byId = (id: string) => cases.find((c) => c.id === id)!;
  const planOf = (id: string) => byId(id).scripted.filter((e) => e.purpose === "plan");
  return [
    twin(byId("gen-json-object"), [
      { purpose: "llm_generate", answer: { japan: "JPY", switzerland: "EUR" } },
    ]),
    twin(byId("gen-json-schema"), [
      { purpose: "llm_generate", answer: { name: "Maria Okafor", age: 43 } },
    ]),
    twin(byId("gen-text-capital"), [{ purpose: "llm_generate", answer: "Sydney" }]),
    twin(byId("plan-translate"), [
      ...planOf("plan-translate"),
      { purpose: "llm_generate", answer: "La librería abre a las nueve." },
    ]),
    twin(byId("gen-summary-judge"), [
      ...byId("gen-summary-judge").scripted.filter((e) => e.purpose !== "judge"),
      { purpose: "judge", answer: { pass: false, reason: "it leaves out the saving" } },
    ]),
    // Expected to fail at its budget; the model ends the loop at once, so it completes.
    twin(byId("error-step-budget"), [
      { purpose: "jmp_condition", answer: { result: true, explanation: "reached" } },
    ]),
  ];
}

let cases: EvalCase[];
let twins: EvalCase[];
let stack: EvalStack;
let results: CaseResult[];
let adaptive: CaseResult[];

/** The cases whose next action depends on a result: a plan written up front misses them. */
const ADAPTIVE_ONLY = [
  "adaptive-explore-inventory",
  "adaptive-tool-by-policy",
  "adaptive-count-log-pages",
];

beforeAll(async () => {
  const loaded = await loadCases();
  stack = await startEvalStack({
    env: { STACKVM_WORKER_CONCURRENCY: "8" },
    scripted: (url) => {
      cases = loaded.map((c) => fillPlaceholders(c, { fixture_url: url }));
      twins = wrongTwins(cases);
      return [...cases, ...twins];
    },
    logLevel: "silent",
  });
  const options = {
    api: stack.api,
    runId: "test",
    concurrency: cases.length + twins.length,
    // Generous: the point is the scores, and on a loaded machine one mode's run took 136 s.
    caseTimeoutMs: 300_000,
    pollMs: 1000,
    available: stack.available,
  };
  results = await runCases([...cases, ...twins], { ...options, planning: "up_front" });
  // The same cases again, planned adaptively, as `npm run eval` runs them (the twins once is enough).
  stack.resetScript();
  adaptive = await runCases(cases, { ...options, planning: "adaptive" });
}, 840_000);
afterAll(async () => {
  await stack?.stop();
});

const result = (id: string) => results.find((r) => r.id === id)!;

describe("npm run eval against the scripted LLM", () => {
  it("ships at least 40 cases across the plan language's features", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(new Set(cases.map((c) => c.feature))).toEqual(
      new Set([
        "assign",
        "jmp",
        "llm_generate",
        "planning",
        "run_code",
        "code_task",
        "tools",
        "parallel_group",
        "wait",
        "knowledge",
        "reasoning",
        "errors",
        "adaptive",
      ]),
    );
    const kinds = new Set(cases.map((c) => Object.keys(c.check)[0]));
    expect(kinds).toEqual(new Set(["exact", "number", "regex", "contains", "judge", "error"]));
  });

  it("scores every case right planned adaptively, and all but three up front, with nothing left unanswered", () => {
    const own = results.slice(0, cases.length);
    const wrong = (rs: CaseResult[]) =>
      rs.filter((r) => !r.right).map((r) => `${r.id}: ${r.status}: ${r.reason}`);
    if (wrong(adaptive).length) console.log(runTable(adaptive));
    expect(wrong(adaptive)).toEqual([]);
    expect(adaptive.every((r) => r.planning === "adaptive")).toBe(true);
    // Up front each ran the plan written before its fetch and answered what that plan computes.
    expect(wrong(own)).toEqual([
      "adaptive-explore-inventory: completed: 0 is not within 0 of 12",
      "adaptive-tool-by-policy: completed: 4.9 is not within 0.001 of 7.5",
      "adaptive-count-log-pages: completed: 1 is not within 0 of 4",
    ]);
    expect(own.every((r) => r.planning === "up_front")).toBe(true);
    expect(stack.unanswered).toEqual([]);
  });

  it("plans the cases that need a result once up front, and again after the result adaptively", () => {
    for (const id of ADAPTIVE_ONLY) {
      expect(result(id)).toMatchObject({ plan_updates: 0, llm_calls: 1 });
      expect(adaptive.find((r) => r.id === id)).toMatchObject({ plan_updates: 1, llm_calls: 2 });
    }
    // Reading the page count, then two more pages: four steps where up front took two.
    expect(result("adaptive-count-log-pages").steps).toBe(2);
    expect(adaptive.find((r) => r.id === "adaptive-count-log-pages")!.steps).toBe(4);
    // Both modes solve the moons: up front in one planning call, adaptive in three.
    expect(result("adaptive-moons")).toMatchObject({ right: true, plan_updates: 0, llm_calls: 3 });
    expect(adaptive.find((r) => r.id === "adaptive-moons")).toMatchObject({
      right: true,
      plan_updates: 2,
      llm_calls: 5,
    });
  });

  it("reports both modes side by side: per case and in total, and what only one mode solved", () => {
    const own = results.slice(0, cases.length);
    const table = modesTable(own, adaptive);
    const [up, ad] = [totalsOf(own), totalsOf(adaptive)];
    expect(table).toMatch(
      /adaptive-tool-by-policy\s+no \| yes\s+2 \| 2\s+0 \| 1\s+1 \| 2\s+\d+ \| \d+\s+up front: completed: 4\.9 is not within 0\.001 of 7\.5/,
    );
    expect(table).toMatch(
      new RegExp(`TOTAL\\s+${up.right}/${up.ran} \\| ${ad.right}/${ad.ran}\\s`),
    );
    expect([up.right, ad.right]).toEqual([cases.length - 3, cases.length]);
    expect(ad.llm_calls - up.llm_calls).toBe(5);
    expect(ad.input_tokens + ad.output_tokens).toBeGreaterThan(up.input_tokens + up.output_tokens);
    expect(table).toContain(`solved only adaptive: ${ADAPTIVE_ONLY.join(", ")}`);
    expect(table).toContain("solved only up front: none");
  });

  it("adds up the totals from what the tasks report", () => {
    const own = results.slice(0, cases.length);
    const totals = totalsOf(own);
    const goals = cases.filter((c) => !c.plan).length;
    expect(totals).toMatchObject({
      cases: cases.length,
      ran: cases.length,
      skipped: 0,
      completed: cases.length,
      right: cases.length - 3,
      goal_cases: goals,
      // plan-repaired's first plan calls a tool that does not exist: two planner answers.
      plan_first_try: goals - 1,
      plan_attempts: goals + 1,
      // The four error cases that a plan update repairs.
      plan_updates: 4,
      judge_llm_calls: 1,
    });
    // Adaptive adds adaptive-moons' two planning calls and one for each case that needs a result.
    expect(totalsOf(adaptive)).toMatchObject({ right: cases.length, plan_updates: 9 });
    expect(totals.llm_calls).toBe(own.reduce((n, r) => n + r.llm_calls, 0));
    expect(totals.input_tokens).toBeGreaterThan(totals.output_tokens);
    expect(totals.ingest_llm_calls).toBeGreaterThan(0);
    expect(runTable(own)).toMatch(
      new RegExp(
        `TOTAL\\s+${cases.length} ran\\s+${goals - 1}/${goals}\\s+${goals + 1}\\s+4\\s+${cases.length}/${cases.length}\\s+${cases.length - 3}/${cases.length}`,
      ),
    );
  });

  it("reads each case's own numbers from its task and commits", () => {
    expect(result("assign-arithmetic")).toMatchObject({
      kind: "goal",
      plan_first_try: true,
      plan_attempts: 1,
      steps: 2,
      llm_calls: 1,
    });
    expect(result("plan-repaired")).toMatchObject({
      plan_first_try: false,
      plan_attempts: 2,
      llm_calls: 2,
    });
    // 0, then 1-2-3 three times, then 1 and 4; four conditions asked.
    expect(result("jmp-loop-counter")).toMatchObject({
      kind: "plan",
      plan_first_try: null,
      steps: 12,
      llm_calls: 4,
    });
    expect(result("code-task-squares")).toMatchObject({ llm_calls: 2, final_answer: 385 });
    expect(result("error-replan-code")).toMatchObject({ plan_updates: 1, final_answer: 18 });
    expect(result("error-step-budget")).toMatchObject({
      status: "failed",
      completed: true,
      right: true,
      steps: 6,
    });
    expect(result("kb-refund-days").ingest?.llm_calls).toBeGreaterThan(0);
    expect(result("gen-summary-judge").judge).toMatchObject({ llm_calls: 1 });
    for (const r of [...results, ...adaptive]) expect(r.wall_ms).toBeGreaterThan(0);
  });

  it("scores a wrong scripted answer wrong, whatever the checker", () => {
    const scored = twins
      .map((c) => result(c.id))
      .map((r) => [r.id, r.checker, r.right, r.completed]);
    expect(scored).toEqual([
      ["gen-json-object-wrong", "exact", false, true],
      ["gen-json-schema-wrong", "number", false, true],
      ["gen-text-capital-wrong", "regex", false, true],
      ["plan-translate-wrong", "contains", false, true],
      ["gen-summary-judge-wrong", "judge", false, true],
      ["error-step-budget-wrong", "error", false, false],
    ]);
    expect(result("gen-json-schema-wrong").reason).toBe("43 is not within 0 of 34");
    expect(result("gen-summary-judge-wrong").reason).toContain("it leaves out the saving");
  });
});

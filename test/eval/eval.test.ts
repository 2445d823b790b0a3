/**
 * The eval's whole dataset against the scripted LLM, on one in-process stack,
 * all cases at once: every case is right, the totals add up, and a case whose
 * scripted answer is wrong is scored wrong by its checker.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvalCase, fillPlaceholders, loadCases } from "./dataset";
import { type EvalStack, startEvalStack } from "./local";
import { type CaseResult, totalsOf } from "./metrics";
import { runTable } from "./report";
import { runCases } from "./runner";

let cases: EvalCase[];
let stack: EvalStack;
let results: CaseResult[];

beforeAll(async () => {
  const loaded = await loadCases();
  stack = await startEvalStack({
    env: {},
    scripted: (url) => (cases = loaded.map((c) => fillPlaceholders(c, { fixture_url: url }))),
    logLevel: "silent",
  });
  results = await runCases(cases, {
    api: stack.api,
    runId: "test",
    concurrency: cases.length,
    caseTimeoutMs: 60_000,
    pollMs: 1000,
    available: stack.available,
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe("npm run eval against the scripted LLM", () => {
  it("scores every case right", () => {
    const wrong = results.filter((r) => !r.right).map((r) => `${r.id}: ${r.status}: ${r.reason}`);
    if (wrong.length) console.log(runTable(results));
    expect(wrong).toEqual([]);
    expect(stack.unanswered).toEqual([]);
  });
});

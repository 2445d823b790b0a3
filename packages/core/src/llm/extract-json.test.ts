import { describe, expect, it } from "vitest";
import { extractJson } from "./extract-json";

describe("extractJson", () => {
  it.each([
    ["plain JSON", '{"a": 1}', { a: 1 }],
    ["a scalar", "true", true],
    ["a json fence", 'Here:\n```json\n{"a": [1, 2]}\n```\nDone.', { a: [1, 2] }],
    ["a bare fence", '```\n[{"b": "x"}]\n```', [{ b: "x" }]],
    [
      "leading prose",
      'Sure! The answer is {"result": true, "explanation": "ok"}',
      { result: true, explanation: "ok" },
    ],
    [
      "braces inside strings",
      'Answer: {"s": "a } and { b", "n": 2} trailing',
      { s: "a } and { b", n: 2 },
    ],
    ["escaped quotes", 'x {"s": "say \\"hi\\" }"} y', { s: 'say "hi" }' }],
    ["a bracket in prose first", 'Pick [one] of: {"pick": 1}', { pick: 1 }],
  ])("finds the value in %s", (_, text, value) => {
    expect(extractJson(text)).toEqual({ ok: true, value });
  });

  it.each([
    ["empty", "", /empty/],
    ["prose", "I cannot do that.", /not JSON/],
    ["broken JSON", '{"a": 1,,}', /not JSON/],
  ])("says why %s text has no JSON", (_, text, error) => {
    const result = extractJson(text);
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.error).toMatch(error);
  });
});

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

describe("extractJson with a reasoning model's thinking", () => {
  it.each([
    [
      "a closed block before the JSON, braces inside",
      '<think>Maybe {"a": 0}? Or [1]. No.</think>\n{"a": 1}',
      'Maybe {"a": 0}? Or [1]. No.',
    ],
    [
      "the opening tag in the chat template",
      'I should answer {"a": 2} or so.\n</think>\n\n{"a": 1}',
      'I should answer {"a": 2} or so.',
    ],
    ["a <thinking> block after a fence", '<thinking>x</thinking>```json\n{"a": 1}\n```', "x"],
  ])("takes the JSON, not the thinking, in %s", (_, text, thinking) => {
    expect(extractJson(text)).toEqual({ ok: true, value: { a: 1 }, thinking });
  });

  it("says an answer stopped while thinking holds no JSON", () => {
    const result = extractJson('<think>First {"a": 0}, then');
    expect(result).toEqual({
      ok: false,
      error: "the answer holds only thinking (<think>…) and no JSON after it",
    });
  });
});

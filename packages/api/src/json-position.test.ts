import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonProblem } from "./json-position";

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe("jsonProblem", () => {
  it.each([
    ['{"a": x}', 6, 1, 7, "a value"],
    ['{"a": 1,}', 8, 1, 9, "a property name"],
    ["{'a': 1}", 1, 1, 2, "a property name"],
    ['{\n  "a": 1\n  "b": 2\n}', 13, 3, 3, "',' or '}'"],
    ["[1, 2", 5, 1, 6, "',' or ']'"],
    ['{"a": "x\u0001"}', 8, 1, 9, "no control character"],
    ['{"a": "\\q"}', 8, 1, 9, "an escape"],
    ['{"a": 1} {"b": 2}', 9, 1, 10, "the end of the body"],
    ['{"a": tru}', 6, 1, 7, "a value"],
    ['{"a": "open', 11, 1, 12, "the closing"],
  ])(
    "places the problem in %j at offset %i (line %i, column %i)",
    (text, offset, line, column, expected) => {
      expect(parses(text)).toBe(false);
      const problem = jsonProblem(text);
      expect(problem).toMatchObject({ offset, line, column });
      expect(problem!.expected).toContain(expected);
    },
  );

  it("finds nothing wrong in JSON", () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(jsonProblem(text)).toBeNull();
      }),
    );
  });

  it("finds a problem in every text JSON.parse refuses, at an offset inside it", () => {
    const broken = fc
      .tuple(fc.json(), fc.nat(), fc.constantFrom("", "}", "]", ",", ":", "x", '"', "\\", "\u0000"))
      .map(([text, at, insert]) => {
        const cut = at % (text.length + 1);
        return text.slice(0, cut) + insert + text.slice(cut + (insert === "" ? 1 : 0));
      });
    fc.assert(
      fc.property(broken, (text) => {
        const problem = jsonProblem(text);
        expect(problem === null).toBe(parses(text));
        if (problem) expect(problem.offset).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 500 },
    );
  });

  it("walks 200,000 open brackets without overflowing the stack", () => {
    const text = "[".repeat(200_000);
    expect(jsonProblem(text)).toMatchObject({
      offset: 200_000,
      expected: expect.stringContaining("a value"),
    });
  });
});

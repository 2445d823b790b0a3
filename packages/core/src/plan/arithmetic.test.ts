// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StepError } from "../errors";
import { evaluateArithmetic, MAX_ARITHMETIC_DEPTH, MAX_ARITHMETIC_LENGTH } from "./arithmetic";

describe("evaluateArithmetic", () => {
  it.each([
    ["1 + 2", 3],
    ["4.5 * 3 + 1", 14.5],
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["10 - 4 - 3", 3],
    ["12 / 4 / 3", 1],
    ["7 % 3", 1],
    ["-7 % 3", -1],
    ["2 ** 3 ** 2", 512],
    ["-2 ** 2", -4],
    ["(-2) ** 2", 4],
    ["2 ** -1", 0.5],
    ["-3", -3],
    ["+3", 3],
    ["--3", 3],
    ["2 * -3", -6],
    ["1e3 + .5", 1000.5],
    ["1.5E-3 * 2", 0.003],
    ["1. + 1", 2],
    ["  \n 6 / 4\t", 1.5],
    ["0.1 + 0.2", 0.1 + 0.2],
  ])("computes %j as %d", (text, value) => {
    expect(evaluateArithmetic(text)).toBe(value);
  });

  it.each([
    ["a bare number", "42"],
    ["a bare number in parentheses", "(42)"],
    ["an empty string", ""],
    ["words", "three plus four"],
    ["a date", "2024-01-15"],
    ["a zero-padded code", "007 + 1"],
    ["a dangling operator", "1 +"],
    ["a spaced power", "2 * * 3"],
    ["an unclosed parenthesis", "(1 + 2"],
    ["an extra parenthesis", "1 + 2)"],
    ["empty parentheses", "() + 1"],
    ["an exponent without digits", "1e + 2"],
    ["two dots", "1.2.3 + 1"],
    ["hex", "0x10 + 1"],
    ["digit separators", "1_000 + 1"],
    ["Infinity", "Infinity - 1"],
    ["NaN", "NaN * 1"],
    ["a variable that was not resolved", "${x} + 1"],
    ["a JavaScript call", "Math.max(1, 2)"],
  ])("does not treat %s as arithmetic", (_, text) => {
    expect(evaluateArithmetic(text)).toBeUndefined();
  });

  it("treats text longer than the limit as not arithmetic", () => {
    const within = "1+".repeat(MAX_ARITHMETIC_LENGTH / 2 - 1).concat("1");
    expect(evaluateArithmetic(within)).toBe(MAX_ARITHMETIC_LENGTH / 2);
    expect(evaluateArithmetic(`${within}+1`)).toBeUndefined();
  });

  it("treats nesting deeper than the limit as not arithmetic", () => {
    const nest = (depth: number) => `${"(".repeat(depth)}1+1${")".repeat(depth)}`;
    expect(evaluateArithmetic(nest(MAX_ARITHMETIC_DEPTH))).toBe(2);
    expect(evaluateArithmetic(nest(MAX_ARITHMETIC_DEPTH + 1))).toBeUndefined();
    expect(evaluateArithmetic(`${"-".repeat(MAX_ARITHMETIC_DEPTH + 1)}1`)).toBeUndefined();
  });

  it.each([
    ["division by zero", "1 / 0", "division by zero"],
    ["remainder by zero", "5 % (2 - 2)", "division by zero"],
    ["negative zero divisor", "1 / -0", "division by zero"],
    ["overflow", "1e308 * 10", "too large"],
    ["a literal too large", "1e999 + 1", "too large"],
    ["a non-real power", "(-8) ** 0.5", "no real value"],
    ["zero to a negative power", "0 ** -1", "too large"],
  ])("throws arithmetic_error on %s", (_, text, why) => {
    const error = catchError(() => evaluateArithmetic(text));
    expect(error).toBeInstanceOf(StepError);
    expect(error).toMatchObject({ code: "arithmetic_error", kind: "step" });
    expect((error as Error).message).toContain(why);
  });

  it("does not fail on an error inside text that is not arithmetic", () => {
    expect(evaluateArithmetic("1 / 0 + )")).toBeUndefined();
  });

  it("agrees with a direct evaluation of generated expression trees", () => {
    fc.assert(
      fc.property(expressionTree, fc.boolean(), (tree, spaced) => {
        const text = print(tree, spaced);
        const expected = reference(tree);
        if (!hasOperator(tree) || text.length > MAX_ARITHMETIC_LENGTH) {
          expect(evaluateArithmetic(text)).toBeUndefined();
        } else if (expected === "error") {
          expect(() => evaluateArithmetic(text)).toThrow(StepError);
        } else {
          expect(evaluateArithmetic(text)).toBe(expected);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("never evaluates text with a character outside the grammar", () => {
    const outside = fc.string().filter((s) => /[^0-9.eE+\-*/%() \t\n\r]/.test(s));
    fc.assert(
      fc.property(fc.string(), outside, fc.string(), (before, middle, after) => {
        expect(evaluateArithmetic(before + middle + after)).toBeUndefined();
      }),
    );
  });

  it("answers a number, undefined or an arithmetic_error for any text over its alphabet", () => {
    const alphabet = fc.constantFrom(..."0123456789.eE+-*/%() ");
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 40 }), (text) => {
        try {
          const value = evaluateArithmetic(text);
          expect(value === undefined || Number.isFinite(value)).toBe(true);
        } catch (error) {
          expect(error).toMatchObject({ code: "arithmetic_error" });
        }
      }),
    );
  });
});

type Tree =
  | { kind: "number"; text: string }
  | { kind: "paren"; inner: Tree }
  | { kind: "unary"; op: "+" | "-"; operand: Tree }
  | { kind: "binary"; op: "+" | "-" | "*" | "/" | "%" | "**"; left: Tree; right: Tree };

const literal = fc.oneof(
  fc.nat({ max: 1000 }).map(String),
  fc.tuple(fc.nat({ max: 99 }), fc.nat({ max: 99 })).map(([a, b]) => `${a}.${b}`),
  fc
    .tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: -5, max: 5 }))
    .map(([m, e]) => `${m}e${e}`),
);

const expressionTree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    literal.map((text): Tree => ({ kind: "number", text })),
    tie("tree").map((inner): Tree => ({ kind: "paren", inner })),
    fc
      .tuple(fc.constantFrom("+" as const, "-" as const), tie("tree"))
      .map(([op, operand]): Tree => ({ kind: "unary", op, operand })),
    fc
      .tuple(fc.constantFrom("+", "-", "*", "/", "%", "**" as const), tie("tree"), tie("tree"))
      .map(([op, left, right]): Tree => ({ kind: "binary", op, left, right })),
  ),
})).tree;

const PRECEDENCE = { "+": 1, "-": 1, "*": 2, "/": 2, "%": 2, unary: 3, "**": 4, atom: 5 };

function precedence(tree: Tree): number {
  if (tree.kind === "binary") return PRECEDENCE[tree.op];
  return tree.kind === "unary" ? PRECEDENCE.unary : PRECEDENCE.atom;
}

/** Prints with the fewest parentheses the grammar needs, so that precedence is tested. */
function print(tree: Tree, spaced: boolean): string {
  const wrap = (child: Tree, needs: boolean) => {
    const text = print(child, spaced);
    return needs ? `(${text})` : text;
  };
  const gap = spaced ? " " : "";
  switch (tree.kind) {
    case "number":
      return tree.text;
    case "paren":
      return `(${print(tree.inner, spaced)})`;
    case "unary":
      return `${tree.op}${wrap(tree.operand, precedence(tree.operand) < PRECEDENCE.unary)}`;
    case "binary": {
      const p = PRECEDENCE[tree.op];
      if (tree.op === "**") {
        // The base must be an atom; the exponent may be a sign or another power.
        const left = wrap(tree.left, precedence(tree.left) <= p);
        const right = wrap(tree.right, precedence(tree.right) < PRECEDENCE.unary);
        return `${left}${gap}**${gap}${right}`;
      }
      const left = wrap(tree.left, precedence(tree.left) < p);
      const right = wrap(tree.right, precedence(tree.right) <= p);
      return `${left}${gap}${tree.op}${gap}${right}`;
    }
  }
}

function reference(tree: Tree): number | "error" {
  switch (tree.kind) {
    case "number": {
      const value = Number(tree.text);
      return Number.isFinite(value) ? value : "error";
    }
    case "paren":
      return reference(tree.inner);
    case "unary": {
      const value = reference(tree.operand);
      if (value === "error") return value;
      return tree.op === "-" ? -value : value;
    }
    case "binary": {
      const a = reference(tree.left);
      const b = reference(tree.right);
      if (a === "error" || b === "error") return "error";
      if ((tree.op === "/" || tree.op === "%") && b === 0) return "error";
      const ops = {
        "+": a + b,
        "-": a - b,
        "*": a * b,
        "/": a / b,
        "%": a % b,
        "**": a ** b,
      };
      const value = ops[tree.op];
      return Number.isFinite(value) ? value : "error";
    }
  }
}

function hasOperator(tree: Tree): boolean {
  if (tree.kind === "number") return false;
  if (tree.kind === "paren") return hasOperator(tree.inner);
  return true;
}

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

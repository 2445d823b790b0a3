/**
 * Safe arithmetic for `assign` (spec: plan-language.md, "Instruction types"). After
 * references are resolved, a value such as `"${price} * 3 + 1"` becomes `"4.5 * 3 + 1"`;
 * this module decides whether such a string is arithmetic and computes it, with a
 * hand-written tokenizer and recursive-descent parser (never `eval` or `Function`).
 *
 * Grammar, loosest binding first:
 *
 *     expression := term (("+" | "-") term)*
 *     term       := unary (("*" | "/" | "%") unary)*
 *     unary      := ("+" | "-") unary | power
 *     power      := primary ("**" unary)?        right-associative
 *     primary    := number | "(" expression ")"
 *     number     := (0 | [1-9][0-9]*) ("." [0-9]*)? exponent? | "." [0-9]+ exponent?
 *
 * Choices, and why:
 * - `**` binds tighter than a unary sign on its left, as in Python and in maths:
 *   `-2**2` is -4 (JavaScript refuses that text). `2**-1` is 0.5, `2**3**2` is 512.
 * - `%` is JavaScript's remainder (the sign follows the dividend: `-7 % 3` is -1), and
 *   all arithmetic is IEEE double, as everywhere else in the VM.
 * - A bare number, even in parentheses, is not arithmetic (`"42"` stays a string):
 *   only text with an operator is turned into a number, as StackVM did.
 * - An integer part with a leading zero (`007`, `2024-01-15`) is not a number, so
 *   dates and zero-padded codes stay text. `555-1234` is still arithmetic: a plan that
 *   means text must not write it as a bare subtraction.
 */
import { StepError } from "../errors";

/** Longer text is never arithmetic (and is left as it is). */
export const MAX_ARITHMETIC_LENGTH = 1_000;
/** Deeper nesting of parentheses, signs and powers is never arithmetic. */
export const MAX_ARITHMETIC_DEPTH = 100;

type Operator = "+" | "-" | "*" | "/" | "%" | "**";
type Token = { kind: "number"; text: string } | { kind: Operator | "(" | ")" };
type Node =
  | { kind: "number"; text: string }
  | { kind: "unary"; op: "+" | "-"; operand: Node }
  | { kind: "binary"; op: Operator; left: Node; right: Node };

/** Thrown inside the parser when the text is not in the grammar; never escapes. */
class NotArithmetic extends Error {}

const NUMBER = /(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;
const SINGLE_CHAR_TOKENS = new Set(["+", "-", "*", "/", "%", "(", ")"]);
const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

/**
 * Evaluates `text` when the whole of it (trimmed) is an arithmetic expression over
 * number literals; returns `undefined` when it is not, so the caller keeps the text.
 *
 * @throws StepError `arithmetic_error` when the text is arithmetic but has no finite
 *   value (division by zero, overflow, a non-real power).
 * @example
 * evaluateArithmetic("4.5 * 3 + 1") // 14.5
 * evaluateArithmetic("-2 ** 2")     // -4
 * evaluateArithmetic("42")          // undefined: no operator
 * evaluateArithmetic("2024-01-15")  // undefined: 01 is not a number
 */
export function evaluateArithmetic(text: string): number | undefined {
  if (text.length > MAX_ARITHMETIC_LENGTH) return undefined;
  let tree: Node;
  try {
    const tokens = tokenize(text);
    if (
      tokens === undefined ||
      !tokens.some((t) => t.kind !== "number" && t.kind !== "(" && t.kind !== ")")
    ) {
      return undefined;
    }
    tree = new Parser(tokens).parseAll();
  } catch (error) {
    if (error instanceof NotArithmetic) return undefined;
    throw error;
  }
  // Evaluate only after the whole text parsed: "1/0 + )" is not arithmetic, not an error.
  return evaluate(tree, text);
}

function tokenize(text: string): Token[] | undefined {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (WHITESPACE.has(c)) {
      i += 1;
    } else if (c === "*" && text[i + 1] === "*") {
      tokens.push({ kind: "**" });
      i += 2;
    } else if (SINGLE_CHAR_TOKENS.has(c)) {
      tokens.push({ kind: c as Operator | "(" | ")" });
      i += 1;
    } else {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(text);
      if (match === null) return undefined;
      tokens.push({ kind: "number", text: match[0] });
      i += match[0].length;
    }
  }
  return tokens;
}

class Parser {
  private position = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parseAll(): Node {
    const tree = this.parseExpression();
    if (this.position !== this.tokens.length) throw new NotArithmetic();
    return tree;
  }

  private parseExpression(): Node {
    let left = this.parseTerm();
    for (let op = this.peek(); op === "+" || op === "-"; op = this.peek()) {
      this.position += 1;
      left = { kind: "binary", op, left, right: this.parseTerm() };
    }
    return left;
  }

  private parseTerm(): Node {
    let left = this.parseUnary();
    for (let op = this.peek(); op === "*" || op === "/" || op === "%"; op = this.peek()) {
      this.position += 1;
      left = { kind: "binary", op, left, right: this.parseUnary() };
    }
    return left;
  }

  private parseUnary(): Node {
    const op = this.peek();
    if (op === "+" || op === "-") {
      this.position += 1;
      return { kind: "unary", op, operand: this.nested(() => this.parseUnary()) };
    }
    return this.parsePower();
  }

  private parsePower(): Node {
    const base = this.parsePrimary();
    if (this.peek() !== "**") return base;
    this.position += 1;
    return { kind: "binary", op: "**", left: base, right: this.nested(() => this.parseUnary()) };
  }

  private parsePrimary(): Node {
    const token = this.tokens[this.position];
    this.position += 1;
    if (token?.kind === "number") return token;
    if (token?.kind !== "(") throw new NotArithmetic();
    const inner = this.nested(() => this.parseExpression());
    if (this.tokens[this.position]?.kind !== ")") throw new NotArithmetic();
    this.position += 1;
    return inner;
  }

  /** Bounds the recursion, so that hostile text cannot exhaust the stack. */
  private nested(parse: () => Node): Node {
    this.depth += 1;
    if (this.depth > MAX_ARITHMETIC_DEPTH) throw new NotArithmetic();
    const node = parse();
    this.depth -= 1;
    return node;
  }

  private peek(): Token["kind"] | undefined {
    return this.tokens[this.position]?.kind;
  }
}

function evaluate(node: Node, text: string): number {
  switch (node.kind) {
    case "number": {
      const value = Number(node.text);
      if (!Number.isFinite(value)) fail(text, `the number ${node.text} is too large`);
      return value;
    }
    case "unary": {
      const operand = evaluate(node.operand, text);
      return node.op === "-" ? -operand : operand;
    }
    case "binary": {
      const left = evaluate(node.left, text);
      const right = evaluate(node.right, text);
      if ((node.op === "/" || node.op === "%") && right === 0) {
        fail(text, `division by zero (${left} ${node.op} 0)`);
      }
      const value = apply(node.op, left, right);
      if (!Number.isFinite(value)) {
        const why = Number.isNaN(value) ? "has no real value" : "is too large";
        fail(text, `${left} ${node.op} ${right} ${why}`);
      }
      return value;
    }
  }
}

function apply(op: Operator, left: number, right: number): number {
  switch (op) {
    case "+":
      return left + right;
    case "-":
      return left - right;
    case "*":
      return left * right;
    case "/":
      return left / right;
    case "%":
      return left % right;
    case "**":
      return left ** right;
  }
}

function fail(text: string, why: string): never {
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  throw new StepError(
    "arithmetic_error",
    `Cannot compute "${shown.trim()}": ${why}. Check the values this assign uses, or guard it with a jmp.`,
    { expression: text },
  );
}

/**
 * Where JSON text stops being JSON. `JSON.parse` says that it failed but not
 * always where ("Unexpected token 'x', … is not valid JSON", "Unexpected end of
 * JSON input"), and its messages change between engines; this walks the grammar
 * of RFC 8259 once, strictly, and answers the offset of the first character
 * that no JSON text could have there, with its line and column, so that a 400
 * can point at it. (A library for this, such as jsonc-parser, is lenient by
 * design: comments and trailing commas.)
 */

/** The first offending character of text that `JSON.parse` refused. */
export interface JsonProblem {
  /** 0-based offset in characters; the text's length when it ended too early. */
  offset: number;
  /** 1-based line and column of `offset`. */
  line: number;
  column: number;
  /** What was expected there, in a few words. */
  expected: string;
}

class Stop extends Error {
  constructor(
    readonly at: number,
    readonly expected: string,
  ) {
    super(expected);
  }
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/**
 * Finds the first problem in text that is not JSON; null when it is JSON.
 *
 * @example
 * jsonProblem('{"a": x}') // { offset: 6, line: 1, column: 7, expected: "a value" }
 */
export function jsonProblem(text: string): JsonProblem | null {
  let i = 0;
  const skip = () => {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++;
  };
  const expect = (char: string) => {
    if (text[i] !== char) throw new Stop(i, `'${char}'`);
    i++;
  };
  const string = () => {
    expect('"');
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new Stop(i, "the closing '\"' of a string");
      if (c === '"') {
        i++;
        return;
      }
      if (c < " ") throw new Stop(i, "no control character inside a string (escape it)");
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else if (e !== undefined && ESCAPES.has(e)) i += 2;
        else throw new Stop(i + 1, 'an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      } else i++;
    }
  };
  /** The length of the literal or number at `i`. */
  const literalLength = (): number => {
    const word = ["true", "false", "null"].find((w) => text.startsWith(w, i));
    if (word) return word.length;
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number) return number[0].length;
    throw new Stop(i, "a value (an object, array, string, number, true, false or null)");
  };
  const scalar = () => {
    if (text[i] === '"') string();
    else i += literalLength();
  };
  const member = () => {
    skip();
    if (text[i] !== '"') throw new Stop(i, "a property name in double quotes");
    string();
    skip();
    expect(":");
  };
  // A loop with its own stack, not recursion: a body of a million '[' is one
  // request away, and must not overflow the call stack.
  const walk = () => {
    const open: Array<"{" | "["> = [];
    for (;;) {
      skip();
      const c = text[i];
      if (c === "{" || c === "[") {
        i++;
        skip();
        if (text[i] !== (c === "{" ? "}" : "]")) {
          open.push(c);
          if (c === "{") member();
          continue;
        }
        i++;
      } else scalar();
      for (;;) {
        const top = open.at(-1);
        if (top === undefined) return;
        const close = top === "{" ? "}" : "]";
        skip();
        if (text[i] === close) {
          i++;
          open.pop();
          continue;
        }
        if (text[i] !== ",") throw new Stop(i, `',' or '${close}'`);
        i++;
        if (top === "{") member();
        break;
      }
    }
  };
  try {
    walk();
    skip();
    if (i < text.length) throw new Stop(i, "the end of the body (one JSON value only)");
    return null;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    return { offset: error.at, ...lineAndColumn(text, error.at), expected: error.expected };
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  return { line: before.split("\n").length, column: offset - lineStart + 1 };
}

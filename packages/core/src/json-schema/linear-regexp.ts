/**
 * The regular-expression engine of tenant-supplied JSON Schemas (`pattern`,
 * `patternProperties`). V8's engine backtracks: `^(a+)+$` against 31 `a`s and a
 * `!` takes seconds, doubling with each character, and the whole process waits.
 * RE2 (here its pure-JS port, `re2js`) matches in time linear in the input and
 * refuses the features that need backtracking (backreferences, lookaround), so a
 * schema that uses them is refused when it is registered, with the reason.
 */
import { RE2JS } from "re2js";

/** The longest `pattern` a schema may carry, in characters. */
export const MAX_PATTERN_LENGTH = 1000;

/** A compiled pattern with the one method Ajv calls. */
export class LinearRegExp {
  readonly #re: RE2JS;
  readonly #source: string;

  /** @throws Error naming the pattern when RE2 cannot compile it. */
  constructor(source: string) {
    if (source.length > MAX_PATTERN_LENGTH) {
      throw new Error(
        `the pattern ${JSON.stringify(source.slice(0, 40))}… is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH}`,
      );
    }
    try {
      this.#re = RE2JS.compile(source);
    } catch (error) {
      throw new Error(
        `the pattern ${JSON.stringify(source)} cannot be matched in linear time (${(error as Error).message}); write it without backreferences and lookaround`,
      );
    }
    this.#source = source;
  }

  /** Whether the pattern matches anywhere in `text` (JSON Schema's `pattern` is unanchored). */
  test(text: string): boolean {
    return this.#re.test(text);
  }

  /** Ajv keys its compiled patterns by this text: two patterns must never share it. */
  toString(): string {
    return `/${this.#source}/`;
  }
}

/**
 * Ajv's `code.regExp` option: builds a {@link LinearRegExp} (Ajv passes the flag
 * `u`; RE2 reads patterns as Unicode anyway).
 *
 * @example
 * new Ajv({ code: { regExp: linearRegExp } })
 */
export const linearRegExp = Object.assign(
  (source: string, _flags: string) => new LinearRegExp(source),
  {
    code: "linearRegExp",
  },
);

/**
 * Text that people read in lists: the `name` of a task, a trigger or a schedule,
 * and the title a task is shown by. Such text reaches a terminal (`stackvm
 * tasks`), where ESC starts an escape sequence that can clear the screen, move
 * the cursor, retitle the window or rewrite the clipboard; a page shows control
 * characters as nothing at all. So a name is refused when it carries a control
 * character or an unpaired surrogate (invalid UTF-16, which JSON can spell as
 * `"\ud800"`), and a title made from other text (a goal, a prompt) shows each
 * such character as U+FFFD.
 *
 * Bidirectional controls are kept: right-to-left names need them, and both of
 * the project's readers show them as visible escapes (the CLI's `bidi.ts`, the
 * console's `bidi.ts`).
 */
import * as z from "zod";

/** C0 controls, DEL and C1 controls (U+0085 NEL and U+009B CSI among them). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** A high surrogate without its low half, or a low one without its high half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What is wrong with `text` as a name to show, or null. */
export function displayTextProblem(text: string): string | null {
  const control = CONTROL.exec(text);
  if (control) {
    return `contains the control character U+${hex(control[0])} at offset ${control.index}: give plain text (control characters are not shown by the console and are acted on by terminals)`;
  }
  const lone = LONE_SURROGATE.exec(text);
  if (lone) {
    return `contains an unpaired surrogate U+${hex(lone[0])} at offset ${lone.index}: give valid Unicode text`;
  }
  return null;
}

const hex = (c: string) => c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");

/**
 * A name people read in lists: 1 to `max` characters, no control character, no
 * unpaired surrogate.
 *
 * @example
 * DisplayName(100).parse("nightly sums") // "nightly sums"
 * DisplayName(100).parse("\u001b[2J") // throws: contains the control character U+001B at offset 0
 */
export function DisplayName(max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .superRefine((text, ctx) => {
      const problem = displayTextProblem(text);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    });
}

const CONTROLS = new RegExp(CONTROL.source, "g");
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

/**
 * `text` with every control character and unpaired surrogate shown as U+FFFD:
 * for a title made from text that may hold them (a goal, a prompt, a name
 * stored before names were checked). Whitespace should be folded first.
 *
 * @example
 * showable("\u001b]0;owned\u0007") // "\ufffd]0;owned\ufffd"
 */
export function showable(text: string): string {
  return text.replace(CONTROLS, "\ufffd").replace(LONE_SURROGATES, "\ufffd");
}

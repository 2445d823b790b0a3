/**
 * Control characters neutralized for the terminal. Names, goals, answers and
 * the text a model streams come from the API, and a terminal acts on what they
 * carry: ESC `[2J` clears the screen, ESC `]0;…` retitles the window, ESC
 * `]52;…` writes the clipboard, a lone carriage return lets the rest of a line
 * print over its start (`approved\rREJECTED`). Every line and piece of text the
 * CLI prints goes through {@link neutralizeControls}, which writes each such
 * character as its escape (`\u001b`), as JSON would: visible to a person.
 *
 * The CLI's own colours are the one exception: the exact SGR sequences its
 * `paint` writes (`style.ts`) are kept, and only when colours are on. Text from
 * the API could spell one of those too, which at worst colours a line.
 */
import { inspect } from "node:util";

/** The styles the CLI paints with. */
export const PAINTS = ["bold", "dim", "gray", "green", "magenta", "red", "yellow", "cyan"] as const;
export type Paint = (typeof PAINTS)[number];

/** The SGR sequences `styleText` writes for {@link PAINTS}, opening and closing. */
const OWN_SGR = new Set(
  PAINTS.flatMap((style) => (inspect.colors[style] ?? []).map((code) => `\u001b[${code}m`)),
);

/**
 * C0 controls but tab and line feed, a carriage return not before a line feed,
 * DEL, C1 controls (U+009B is an 8-bit CSI); and the SGR sequences that may be
 * kept, so that they are matched whole.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
const CONTROLS = /\u001b\[\d{1,2}m|\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * Writes every control character in `text` as its escape; with `colours`, the
 * CLI's own SGR sequences stay.
 *
 * @example
 * neutralizeControls("\u001b]0;owned\u0007x") // "\\u001b]0;owned\\u0007x"
 * neutralizeControls("\u001b[31mred\u001b[39m", { colours: true }) // unchanged
 */
export function neutralizeControls(text: string, options: { colours?: boolean } = {}): string {
  return text.replace(CONTROLS, (match) => {
    if (match.length > 1) {
      // An SGR sequence: kept when it is one of ours and colours are on.
      return options.colours && OWN_SGR.has(match) ? match : `${escaped(match)}${match.slice(1)}`;
    }
    return escaped(match);
  });
}

/**
 * Bidirectional controls neutralized for the terminal. A name that carries U+202E
 * (right-to-left override) reads backwards from there on: `invoice‮fdp.exe` shows
 * as `invoiceexe.pdf`, a filename spoof. Every line the CLI prints goes through
 * {@link neutralizeBidi}, which writes each control as its escape (`\u202e`):
 * visible to a person, and the same string to a JSON reader.
 */

/** The embeddings, overrides, isolates and marks of Unicode's bidirectional algorithm. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Writes every bidirectional control in `text` as its escape.
 *
 * @example
 * neutralizeBidi("invoice\u202efdp.exe") // "invoice\\u202efdp.exe"
 */
export function neutralizeBidi(text: string): string {
  return text.replace(BIDI_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

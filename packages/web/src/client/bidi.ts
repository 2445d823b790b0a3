/**
 * Bidirectional controls neutralized for display. A document named with U+202E
 * (right-to-left override) reversed the rest of the "Cited sources" line:
 * `invoice‮fdp.exe` showed as `invoiceexe.pdf`, a filename spoof. Every answer
 * the console reads from the API (`api.ts`, `task-feed.ts`) passes its strings
 * through {@link neutralizeBidi}, so names, goals and values are shown with each
 * control written as a visible `⟨U+202E⟩`. (The CLI has the same rule in its
 * own package: the console's bundle imports no server code.)
 */

/** The embeddings, overrides, isolates and marks of Unicode's bidirectional algorithm. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Writes every bidirectional control in `text` as a visible `⟨U+XXXX⟩`.
 *
 * @example
 * neutralizeBidi("invoice\u202efdp.exe") // "invoice⟨U+202E⟩fdp.exe"
 */
export function neutralizeBidi(text: string): string {
  return text.replace(
    BIDI_CONTROLS,
    (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}

/** `JSON.parse` of an API answer, every string value neutralized (escaped or not in the text). */
export function parseShown(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) =>
    typeof value === "string" ? neutralizeBidi(value) : value,
  );
}

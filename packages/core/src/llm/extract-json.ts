/**
 * Models asked for JSON often wrap it: a ```json fence, a sentence before it, a
 * remark after it. `extractJson` finds the JSON value in such an answer so that
 * only answers with no JSON at all cost a repair round.
 */

export type ExtractedJson = { ok: true; value: unknown } | { ok: false; error: string };

/** How many `{` / `[` positions to try before giving up on a long prose answer. */
const MAX_CANDIDATES = 20;

/**
 * The first JSON value in a text: the whole text, else the first fenced block,
 * else the first balanced `{...}` or `[...]` that parses.
 *
 * @example
 * extractJson('Here it is:\n```json\n{"a": 1}\n```') // { ok: true, value: { a: 1 } }
 */
export function extractJson(text: string): ExtractedJson {
  const whole = tryParse(text.trim());
  if (whole.ok) return whole;

  const fence = /```[a-zA-Z0-9_-]*[ \t]*\r?\n?([\s\S]*?)```/.exec(text);
  if (fence?.[1] !== undefined) {
    const fenced = tryParse(fence[1].trim());
    if (fenced.ok) return fenced;
  }

  let tried = 0;
  for (let start = 0; start < text.length && tried < MAX_CANDIDATES; start++) {
    const c = text[start];
    if (c !== "{" && c !== "[") continue;
    tried++;
    const end = matchingClose(text, start);
    if (end === -1) continue;
    const candidate = tryParse(text.slice(start, end + 1));
    if (candidate.ok) return candidate;
  }
  return text.trim() === ""
    ? { ok: false, error: "the answer is empty" }
    : { ok: false, error: `the answer is not JSON (${whole.error})` };
}

function tryParse(text: string): ExtractedJson {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** The index of the bracket closing the one at `start`, skipping strings; -1 if none. */
function matchingClose(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

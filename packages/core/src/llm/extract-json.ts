/**
 * Models asked for JSON often wrap it: a ```json fence, a sentence before it, a
 * remark after it, and reasoning models (DeepSeek-R1, Qwen3, served by llama.cpp
 * or Ollama without a reasoning parser) their thinking in `<think>…</think>`
 * before it. `extractJson` finds the JSON value in such an answer so that only
 * answers with no JSON at all cost a repair round, and hands the thinking back
 * apart: braces in it are never taken for the answer.
 */

export type ExtractedJson =
  | { ok: true; value: unknown; thinking?: string }
  | { ok: false; error: string };

/** `<think>` (or `<thinking>`) blocks, closed. */
const THINK_BLOCK = /<(think|thinking)>([\s\S]*?)<\/\1>/gi;

/**
 * An answer's thinking and the rest: closed `<think>…</think>` blocks anywhere, a
 * `</think>` whose opening tag was in the chat template (everything before it),
 * and a `<think>` never closed (everything after it: the answer stopped while
 * thinking).
 *
 * @example
 * splitThinking('<think>a list?</think>{"a": 1}') // { thinking: "a list?", answer: '{"a": 1}' }
 */
export function splitThinking(text: string): { thinking?: string; answer: string } {
  const thoughts: string[] = [];
  let answer = text.replace(THINK_BLOCK, (_, _tag: string, inner: string) => {
    thoughts.push(inner.trim());
    return "";
  });
  const close = /<\/think(ing)?>/i.exec(answer);
  if (close) {
    thoughts.unshift(answer.slice(0, close.index).trim());
    answer = answer.slice(close.index + close[0].length);
  }
  const open = /<think(ing)?>/i.exec(answer);
  if (open) {
    thoughts.push(answer.slice(open.index + open[0].length).trim());
    answer = answer.slice(0, open.index);
  }
  const thinking = thoughts.filter((t) => t !== "").join("\n\n");
  return thinking === "" ? { answer } : { thinking, answer };
}

/** How many `{` / `[` positions to try before giving up on a long prose answer. */
const MAX_CANDIDATES = 20;

/**
 * The first JSON value in a text: the whole text, else the first fenced block,
 * else the first balanced `{...}` or `[...]` that parses.
 *
 * @example
 * extractJson('Here it is:\n```json\n{"a": 1}\n```') // { ok: true, value: { a: 1 } }
 */
export function extractJson(answer: string): ExtractedJson {
  const { thinking, answer: text } = splitThinking(answer);
  const found = extractFrom(text);
  if (!found.ok && thinking !== undefined && text.trim() === "") {
    return { ok: false, error: "the answer holds only thinking (<think>…) and no JSON after it" };
  }
  return found.ok && thinking !== undefined ? { ...found, thinking } : found;
}

function extractFrom(text: string): ExtractedJson {
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

/**
 * What the planner of a thread's turn is told of the turns before it: each
 * turn's goal and answer, oldest first, within a bound of characters so that a
 * long conversation stays inside a small local model's context
 * (docs/local-models.md): the newest turns are kept whole up to their caps,
 * older ones are left out first, and the prompt says how many were.
 */
import type { ThreadHistory } from "../store/records";

/** A value as short text: a string as is, any other as JSON, cut at `max` characters. */
function cut(value: unknown, max: number): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** The most characters the earlier turns take in a prompt. */
export const THREAD_PROMPT_CHARS = 4_000;
/** The most characters of one turn's goal, and of its answer. */
const GOAL_CHARS = 500;
const ANSWER_CHARS = 1_000;

/**
 * The earlier turns as the planner reads them, or "" for a task that is not a
 * turn of a thread.
 *
 * @example
 * threadText({ thread_id: "tsk_1", turns: [{ task_id: "tsk_1", branch: "main", goal: "Add 2 and 3", answer: 5 }], omitted: 0 })
 * // "This goal continues a conversation. Earlier turns, oldest first:\nTurn 1: Add 2 and 3\nAnswer: 5\n…"
 */
export function threadText(thread: ThreadHistory | undefined): string {
  if (!thread || thread.turns.length === 0) return "";
  const lines: string[] = [];
  let used = 0;
  let omitted = thread.omitted;
  const first = thread.omitted + 1;
  // Newest first, so that the turns cut are the oldest.
  for (let i = thread.turns.length - 1; i >= 0; i--) {
    const turn = thread.turns[i]!;
    const text = `Turn ${first + i}: ${cut(turn.goal ?? "(a plan, no goal)", GOAL_CHARS)}\nAnswer: ${cut(turn.answer, ANSWER_CHARS)}`;
    if (used + text.length > THREAD_PROMPT_CHARS && lines.length > 0) {
      omitted += i + 1;
      break;
    }
    lines.unshift(text);
    used += text.length;
  }
  const left = omitted > 0 ? `(${omitted} earlier turn${omitted === 1 ? "" : "s"} left out)\n` : "";
  return `This goal continues a conversation. Earlier turns, oldest first:\n${left}${lines.join("\n")}\nThe input variables hold what the earlier turns computed: reference them as \${name}.\n\n`;
}

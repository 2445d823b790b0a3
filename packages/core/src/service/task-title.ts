/**
 * What a task is called in lists, the console and the CLI, so that tasks can be
 * told apart when they have no goal: the `name` its client gave (a trigger or a
 * schedule gives its own name to the plans it starts), else its goal, else the
 * prompt of its plan's first `llm_generate` call, else its plan's first
 * instruction's kind with the task id. Worked out once, when the task starts.
 */
import type { TaskRecord } from "../store/records";
import { showable } from "./display-text";

/** The longest title, in characters; longer text is cut with an ellipsis. */
export const MAX_TITLE_LENGTH = 120;

/** What a task's title is made from. */
export interface TitleSource {
  name?: string | null | undefined;
  goal?: string | null | undefined;
  /** The plan as the client sent it (validated or not: only read here). */
  plan?: readonly unknown[] | null | undefined;
}

/**
 * The most code points one grapheme cluster keeps in a title. The longest emoji
 * sequences take 10 and real scripts fewer; a letter under hundreds of combining
 * marks ("zalgo" text) would otherwise be drawn over the lines around it.
 */
export const MAX_CLUSTER_LENGTH = 16;

// Made on first use: a segmenter loads ICU's break rules, several milliseconds
// of a cold start that a step which titles no task would pay for nothing.
let graphemes: Intl.Segmenter | undefined;

/**
 * One line of at most {@link MAX_TITLE_LENGTH} characters (code points), or null
 * for blank text. Control characters show as U+FFFD (`display-text.ts`), and the
 * line is cut between grapheme clusters, so that an emoji or an accented letter
 * is never split.
 */
function line(text: unknown): string | null {
  if (typeof text !== "string") return null;
  const flat = showable(text.replace(/\s+/g, " ").trim());
  if (flat === "") return null;
  graphemes ??= new Intl.Segmenter("en", { granularity: "grapheme" });
  const clusters = Array.from(graphemes.segment(flat), ({ segment }) =>
    Array.from(segment).slice(0, MAX_CLUSTER_LENGTH).join(""),
  );
  const whole = clusters.join("");
  if (Array.from(whole).length <= MAX_TITLE_LENGTH) return whole;
  let cut = "";
  let length = 0;
  for (const cluster of clusters) {
    const size = Array.from(cluster).length;
    if (length + size > MAX_TITLE_LENGTH - 1) break;
    cut += cluster;
    length += size;
  }
  return `${cut.trimEnd()}…`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The prompt of the plan's first `llm_generate` call, in `calling` form or in
 * StackVM's form (the tool's name as the type).
 */
export function firstPrompt(plan: readonly unknown[]): string | null {
  for (const instruction of plan) {
    if (!isObject(instruction) || !isObject(instruction.parameters)) continue;
    const p = instruction.parameters;
    if (instruction.type === "calling" && p.tool_name === "llm_generate") {
      const prompt = line(isObject(p.tool_params) ? p.tool_params.prompt : null);
      if (prompt) return prompt;
    }
    if (instruction.type === "llm_generate") {
      const prompt = line(p.prompt);
      if (prompt) return prompt;
    }
  }
  return null;
}

/**
 * @example
 * taskTitle({ plan: [{ seq_no: 0, type: "calling", parameters: { tool_name: "llm_generate", tool_params: { prompt: "Write a haiku" } } }] }, "tsk_1")
 * // "Write a haiku"
 * taskTitle({ plan: [{ seq_no: 0, type: "assign", parameters: { a: 1 } }] }, "tsk_1") // "plan task tsk_1"
 */
export function taskTitle(source: TitleSource, taskId: string): string {
  return (
    line(source.name) ??
    line(source.goal) ??
    (source.plan ? firstPrompt(source.plan) : null) ??
    `plan task ${taskId}`
  );
}

/**
 * The title of a stored task; one written before titles were kept gets its title
 * from its name or goal. A stored title is read through the same rules again: one
 * written before control characters were shown as U+FFFD may still hold them.
 */
export function storedTitle(task: TaskRecord): string {
  return line(task.title) ?? taskTitle({ name: task.name ?? null, goal: task.goal }, task.task_id);
}

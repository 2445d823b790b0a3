/**
 * The goal as every LLM call of a task sees it, with the response format folded in
 * (`spec/plan-language.md`, "Response format and language").
 */
import type { ResponseFormat } from "../model";
import { ANSWER_SCHEMA_KEY } from "../record-fields";

/** Reads a trailing `(Lang: Japanese, Format: table)` of a goal as a response format. */
export function parseTrailingFormat(goal: string): { goal: string; format: ResponseFormat } {
  const match = /\(\s*((?:[A-Za-z_]+\s*:\s*[^,()]+,?\s*)+)\)\s*$/.exec(goal);
  if (!match) return { goal, format: {} };
  const format: ResponseFormat = {};
  for (const part of match[1]!.split(",")) {
    const [key, ...rest] = part.split(":");
    if (key && rest.length > 0) format[key.trim().toLowerCase()] = rest.join(":").trim();
  }
  return { goal: goal.slice(0, match.index).trimEnd(), format };
}

/** Lower-cases the keys of a response format (keys are case-insensitive). */
export function normalizeFormat(format: ResponseFormat): ResponseFormat {
  return Object.fromEntries(Object.entries(format).map(([k, v]) => [k.toLowerCase(), v]));
}

/** The text block that carries the goal and its response format into a prompt. */
export function goalText(goal: string | null, format: ResponseFormat): string {
  const lines: string[] = [];
  if (goal) lines.push(`The task's goal: ${goal}`);
  const f = normalizeFormat(format);
  if (f.lang) {
    lines.push(
      `Write every answer meant for the user (above all final_answer) in ${String(f.lang)}.`,
    );
  }
  if (f.format) lines.push(`Format of the final answer: ${String(f.format)}.`);
  if (f.background) lines.push(`Background: ${String(f.background)}`);
  if (f.annotations) lines.push(`Annotations: ${String(f.annotations)}`);
  const schema = f[ANSWER_SCHEMA_KEY];
  if (schema !== null && typeof schema === "object") {
    lines.push(
      `The final answer must be a JSON value that validates against this JSON Schema: ${JSON.stringify(schema)}. Set final_answer to that value (an llm_generate step that writes final_answer is asked for JSON of this schema); an answer that does not validate fails the task's last step.`,
    );
  }
  return lines.join("\n");
}

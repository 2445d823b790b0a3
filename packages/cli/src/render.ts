/**
 * How commits, diffs and tasks read in a terminal: one line per commit with what
 * ran and what it produced, cut to fit, plus the tokens and cost so far.
 */
import type { Commit, Diff, Retrying, Task } from "@stackvm/core";
import cliTruncate from "cli-truncate";
import { neutralizeBidi } from "./bidi";
import { neutralizeControls } from "./controls";
import type { Out } from "./style";

/** A value as a short one-line preview. */
export function preview(value: unknown, max = 60): string {
  const text =
    typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? "null");
  const flat = text.replace(/\s+/g, " ");
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export const count = (n: number): string => n.toLocaleString("en-US");

/** `1 step`, `2 steps`, `1,234 tokens`: the count and the word, singular for exactly one. */
export const plural = (n: number, word: string, many = `${word}s`): string =>
  `${count(n)} ${n === 1 ? word : many}`;

/**
 * Cuts `text` with an ellipsis so that it takes at most `width` terminal columns
 * (wide characters count two). `text` is plain: paint it after. Its control and
 * bidirectional characters are written as their escapes first (as `Out.line`
 * would), so that the cut counts the columns the line really takes.
 */
export function fit(text: string, width: number): string {
  return cliTruncate(neutralizeBidi(neutralizeControls(text)), Math.max(width, 1), {
    position: "end",
  });
}
export const usd = (n: number): string => `$${n.toFixed(n < 0.01 ? 4 : 2)}`;

/** Running totals of the LLM calls seen in commits. */
export interface Totals {
  tokens: number;
  cost: number;
  steps: number;
}

export function addCommit(totals: Totals, commit: Commit): void {
  totals.steps++;
  for (const call of commit.llm_calls) {
    totals.tokens += call.input_tokens + call.output_tokens;
    totals.cost += call.cost_usd;
  }
}

interface Instruction {
  type?: string;
  parameters?: Record<string, unknown>;
}

/** What a commit did, in a few words. */
export function describeCommit(commit: Commit): string {
  const details = (commit.details ?? {}) as Record<string, unknown>;
  const outputs = Object.entries(commit.outputs ?? {})
    .map(([name, value]) => `${name} = ${preview(value)}`)
    .join(", ");
  switch (commit.type) {
    case "plan": {
      const from = details.template_id ? ` (saved plan ${String(details.template_id)})` : "";
      return `plan written${from}: ${preview(details.reasoning ?? "", 70)}`;
    }
    case "plan_update": {
      const inputs = (commit.inputs ?? {}) as Record<string, unknown>;
      const why = inputs.suggestion ? `: ${preview(inputs.suggestion, 60)}` : "";
      return `plan updated, resuming at [${commit.pc_after ?? "-"}]${why}`;
    }
    case "error": {
      const error = (commit.error ?? {}) as { code?: string; message?: string };
      // The type column already says "error".
      return `[${error.code ?? "unknown"}] ${error.message ?? ""}`.replace(/\s+/g, " ");
    }
    case "evaluation": {
      const verdict = details.verdict as { accept: boolean; score: number } | null | undefined;
      if (!verdict) return "evaluation: the answer could not be judged";
      return `evaluation: ${verdict.accept ? "accepted" : "rejected"}, score ${verdict.score}/10 ${preview(details.explanation ?? "", 60)}`;
    }
    case "cancel":
      return "cancelled";
    default: {
      const instruction = (commit.instruction ?? {}) as Instruction;
      const p = instruction.parameters ?? {};
      let what: string = instruction.type ?? "step";
      if (instruction.type === "calling") what = `calling ${String(p.tool_name)}`;
      if (instruction.type === "jmp") {
        what = `jmp → [${commit.pc_after ?? "end"}]`;
        if (details.explanation) what += ` ${preview(details.explanation, 50)}`;
      }
      return outputs ? `${what} → ${outputs}` : what;
    }
  }
}

/**
 * The live line of a commit: branch, step, what it did, totals so far, cut to the
 * terminal's width (what it did gives way; the totals stay).
 */
export function commitLine(out: Out, commit: Commit, totals: Totals): string {
  const branch = commit.branch === "main" ? "" : `(${commit.branch}) `;
  const seq = ` ${(commit.seq_no === null ? "   " : `[${commit.seq_no}]`).padStart(4)} `;
  const type = commit.type.padEnd(11);
  const colour =
    commit.type === "error" ? "red" : commit.type === "step" ? "cyan" : ("yellow" as const);
  const tally = `  ${count(totals.tokens)} tok · ${usd(totals.cost)}`;
  const what = fit(
    describeCommit(commit),
    out.columns - branch.length - type.length - seq.length - tally.length,
  );
  return `${branch && out.paint("magenta", branch)}${out.paint(colour, type)}${seq}${what}${out.paint("gray", tally)}`;
}

/** When a moment is, from now: `in 5 s (12:00:05)`. */
function fromNow(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((Date.parse(iso) - now) / 1000));
  return `in ${seconds} s (${iso.slice(11, 19)})`;
}

/** The line of a failed attempt that will be tried again, cut to the terminal's width. */
export function retryLine(out: Out, retry: Retrying & { branch?: string }): string {
  const branch = retry.branch && retry.branch !== "main" ? `(${retry.branch}) ` : "";
  const head = `attempt ${retry.attempt} of ${retry.max_attempts} failed, next ${fromNow(retry.next_attempt_at)}: `;
  const why = fit(
    `[${retry.error.code}] ${retry.error.message}`.replace(/\s+/g, " "),
    out.columns - branch.length - "retrying    ".length - head.length,
  );
  return `${branch && out.paint("magenta", branch)}${out.paint("red", "retrying    ")}${head}${why}`;
}

/** What a task waiting for a running slot waits for, with its place in line. */
export function slotText(task: Task): string | null {
  const wait = task.waiting_for_slot;
  if (!wait) return null;
  const limit =
    wait.max_running_tasks === null
      ? ""
      : ` (at most ${plural(wait.max_running_tasks, "task")} run at once, all taken)`;
  return `waiting for a running slot: number ${wait.position} in line${limit}`;
}

/** The final answer as text: strings as they are, other values as indented JSON. */
export function answerText(answer: unknown): string {
  return typeof answer === "string" ? answer : JSON.stringify(answer, null, 2);
}

export function taskSummary(task: Task): string[] {
  const u = task.usage;
  return [
    `task     ${task.task_id}`,
    `status   ${task.status}${task.error ? ` (${task.error})` : ""}`,
    task.goal === null ? `title    ${task.title} (started from a plan)` : `goal     ${task.goal}`,
    ...(task.name !== null && task.goal !== null ? [`name     ${task.name}`] : []),
    `branch   ${task.branch}    namespace ${task.namespace}`,
    `usage    ${plural(u.steps, "step")} · ${plural(u.llm_calls, "LLM call")} · ${plural(u.input_tokens + u.output_tokens, "token")} · ${usd(u.cost_usd)}`,
    `created  ${task.created_at}    updated ${task.updated_at}`,
    ...(slotText(task) ? [`queued   ${slotText(task)}`] : []),
    ...(task.retrying
      ? [
          `retrying attempt ${task.retrying.attempt} of ${task.retrying.max_attempts} failed, next at ${task.retrying.next_attempt_at}: [${task.retrying.error.code}] ${task.retrying.error.message}`,
        ]
      : []),
  ];
}

export function diffLines(out: Out, diff: Diff): string[] {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(diff.added)) {
    lines.push(out.paint("green", `+ ${name} = ${preview(value, 100)}`));
  }
  for (const [name, value] of Object.entries(diff.removed)) {
    lines.push(out.paint("red", `- ${name} = ${preview(value, 100)}`));
  }
  for (const [name, change] of Object.entries(diff.changed)) {
    lines.push(
      out.paint("yellow", `~ ${name}: ${preview(change.from, 60)} → ${preview(change.to, 60)}`),
    );
  }
  if (diff.plan_changed) lines.push("plan changed");
  if (diff.pc.from !== diff.pc.to) lines.push(`pc: ${diff.pc.from ?? "-"} → ${diff.pc.to ?? "-"}`);
  if (lines.length === 0) lines.push("no difference");
  return lines;
}

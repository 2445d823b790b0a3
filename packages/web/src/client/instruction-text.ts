/**
 * One line that says what an instruction does, for lists and the graph:
 * `llm_generate(prompt: "…") → facts`, `final_answer = "…"`, `if "…" → 2 else 3`.
 */
import { oneLine } from "./format";

type Loose = Record<string, unknown>;

const obj = (value: unknown): Loose =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Loose) : {};

/** A short description of an instruction as written. */
export function describeInstruction(instruction: unknown, max = 90): string {
  const { type, parameters } = obj(instruction);
  const p = obj(parameters);
  switch (type) {
    case "calling": {
      const params = Object.entries(obj(p.tool_params))
        .map(([k, v]) => `${k}: ${oneLine(v, 40)}`)
        .join(", ");
      const out = Array.isArray(p.output_vars)
        ? p.output_vars.join(", ")
        : typeof p.output_vars === "string"
          ? p.output_vars
          : "";
      return oneLine(`${String(p.tool_name ?? "?")}(${params})${out ? ` → ${out}` : ""}`, max);
    }
    case "assign":
      return oneLine(
        Object.entries(p)
          .map(([k, v]) => `${k} = ${oneLine(v, 50)}`)
          .join("; "),
        max,
      );
    case "jmp":
      return "target_seq" in p
        ? `jump → ${String(p.target_seq)}`
        : oneLine(
            `if ${oneLine(p.condition_prompt, 50)} → ${String(p.jump_if_true)} else ${String(p.jump_if_false)}`,
            max,
          );
    case "reasoning":
      return oneLine(p.chain_of_thoughts ?? p.dependency_analysis ?? "", max);
    default:
      return oneLine(instruction, max);
  }
}

/** What a commit is, in a few words: `step 3 · calling`, `plan`, `error at 2`. */
export function commitTitle(commit: {
  type: string;
  seq_no: number | null;
  instruction: unknown;
}): string {
  const type = obj(commit.instruction).type;
  switch (commit.type) {
    case "step":
      return `#${commit.seq_no ?? "?"} ${typeof type === "string" ? type : "step"}`;
    case "error":
      return commit.seq_no === null ? "error" : `error at #${commit.seq_no}`;
    case "plan_update":
      return "plan update";
    default:
      return commit.type;
  }
}

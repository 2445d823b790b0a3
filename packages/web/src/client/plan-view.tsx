/** @jsxImportSource hono/jsx/dom */
/**
 * A plan as a list of instructions: seq_no, type and a one-line summary, the
 * JSON on demand, the program counter marked, and problems (from the console's
 * checks or the API's 422) shown under the instruction they concern.
 */
import type { PlanProblem } from "@stackvm/core";
import { describeInstruction } from "./instruction-text";
import { JsonView } from "./json-view";
import type { PlacedProblems } from "./plan-problems";

function ProblemList(props: { problems: readonly PlanProblem[] }) {
  return (
    <ul class="problems">
      {props.problems.map((p) => (
        <li class="problem">
          <span class="problem-where">
            {p.path || "plan"}
            {p.code ? <code>{p.code}</code> : null}
          </span>
          <span class="problem-message">{p.message}</span>
          {p.hint ? <span class="problem-hint">Fix: {p.hint}</span> : null}
        </li>
      ))}
    </ul>
  );
}

export function PlanView(props: {
  plan: readonly unknown[];
  /** The seq_no the PC holds, marked in the list. */
  pc?: number | null;
  problems?: PlacedProblems | null;
  label: string;
}) {
  const { plan, problems } = props;
  return (
    <div class="plan-view">
      {problems && problems.general.length > 0 ? (
        <div class="plan-general" role="alert">
          <ProblemList problems={problems.general} />
        </div>
      ) : null}
      <ol class="plan" aria-label={props.label}>
        {plan.map((instruction, index) => {
          const seq = (instruction as { seq_no?: unknown } | null)?.seq_no;
          const type = (instruction as { type?: unknown } | null)?.type;
          const here = props.problems?.byIndex.get(index) ?? [];
          const atPc = props.pc !== undefined && props.pc !== null && seq === props.pc;
          return (
            <li
              class={`instr${atPc ? " at-pc" : ""}${here.length ? " has-problems" : ""}`}
              data-index={index}
              data-seq={typeof seq === "number" ? seq : undefined}
              aria-current={atPc ? "step" : undefined}
            >
              <details open={here.length > 0}>
                <summary>
                  <span class="seq">{typeof seq === "number" ? seq : "?"}</span>
                  <span class="type">{typeof type === "string" ? type : "?"}</span>
                  <span class="summary-text">{describeInstruction(instruction)}</span>
                  {atPc ? <span class="pc-mark">◀ PC</span> : null}
                </summary>
                <JsonView value={instruction} />
              </details>
              {here.length > 0 ? <ProblemList problems={here} /> : null}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

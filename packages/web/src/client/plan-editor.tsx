/** @jsxImportSource hono/jsx/dom */
/**
 * A plan's JSON in a textarea, and under it the problems of the last check or
 * the last 422, each at its instruction. Used to start a task from a plan and
 * to fork with an edited plan.
 */
import type { PlanProblem } from "@stackvm/core";
import { placeProblems } from "./plan-problems";
import { PlanView } from "./plan-view";

export function PlanEditor(props: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  problems: readonly PlanProblem[] | null;
  rows?: number;
}) {
  let plan: unknown[] = [];
  try {
    const parsed: unknown = JSON.parse(props.value);
    if (Array.isArray(parsed)) plan = parsed;
  } catch {
    // the problems say why; there is no plan to lay them on
  }
  const problems = props.problems ?? [];
  return (
    <div class="plan-editor">
      <label for={props.id}>{props.label}</label>
      <textarea
        id={props.id}
        class="code"
        rows={props.rows ?? 14}
        spellcheck={false}
        value={props.value}
        aria-invalid={problems.length > 0 ? "true" : undefined}
        aria-describedby={problems.length > 0 ? `${props.id}-problems` : undefined}
        onInput={(e: Event) => props.onInput((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e: KeyboardEvent) => {
          // Tab indents inside the editor; Escape then Tab leaves it (keyboard users are not trapped).
          if (e.key !== "Tab" || e.shiftKey || (e.target as HTMLElement).dataset.escaped) return;
          e.preventDefault();
          const area = e.target as HTMLTextAreaElement;
          area.setRangeText("  ", area.selectionStart, area.selectionEnd, "end");
          props.onInput(area.value);
        }}
        onKeyUp={(e: KeyboardEvent) => {
          const area = e.target as HTMLTextAreaElement;
          if (e.key === "Escape") area.dataset.escaped = "1";
          else if (e.key !== "Tab" && e.key !== "Shift") delete area.dataset.escaped;
        }}
      />
      <p class="muted small">Tab indents; press Escape first to leave the editor with Tab.</p>
      {problems.length > 0 ? (
        <section class="plan-problems" id={`${props.id}-problems`} aria-live="polite">
          <h3>
            {problems.length === 1 ? "1 problem" : `${problems.length} problems`} in the plan, each
            at its instruction
          </h3>
          <PlanView
            plan={plan}
            problems={placeProblems(plan, problems)}
            label="The plan with its problems"
          />
        </section>
      ) : null}
    </div>
  );
}

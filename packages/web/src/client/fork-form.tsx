/** @jsxImportSource hono/jsx/dom */
/**
 * Forks a new branch at a commit: the planner rewrites the rest from a
 * suggestion ("execute from here"), or with an edited plan, or with one
 * instruction replaced ("optimize step"), or it re-executes as is. Plans and
 * instructions are checked before sending, and a 422 shows at the instruction.
 */
import type { Branch, Commit, PlanProblem, State } from "@stackvm/core";
import { useEffect, useState } from "hono/jsx/dom";
import { ApiError, seg } from "./api";
import { commitTitle } from "./instruction-text";
import { serverHasNoLlm } from "./llm-mode";
import { checkPlanText } from "./plan-check";
import { PlanEditor } from "./plan-editor";
import { placeProblems, problemsOf } from "./plan-problems";
import { PlanView } from "./plan-view";
import { ErrorBox, parseJsonField, useApi } from "./ui";

type Mode = "suggestion" | "plan" | "step" | "rerun";

const MODES: ReadonlyArray<{ key: Mode; label: string }> = [
  { key: "suggestion", label: "With a suggestion" },
  { key: "plan", label: "With an edited plan" },
  { key: "step", label: "Replace one instruction" },
  { key: "rerun", label: "Re-execute as is" },
];

export function ForkForm(props: {
  taskId: string;
  commit: Commit;
  onForked: (branch: Branch, how: string) => void;
  onClose: () => void;
}) {
  const api = useApi();
  const { commit } = props;
  // A suggestion needs the planner: with no LLM on the server, open on an edited
  // plan and offer no suggestion (the API would answer 422 llm_not_configured).
  const [noLlm] = useState(() => serverHasNoLlm(document, sessionStorage));
  const [mode, setMode] = useState<Mode>(noLlm ? "plan" : "suggestion");
  const [name, setName] = useState("");
  const [suggestion, setSuggestion] = useState("");
  const [planText, setPlanText] = useState("");
  const [seqNo, setSeqNo] = useState<string>("");
  const [stepText, setStepText] = useState("");
  const [state, setState] = useState<State | null>(null);
  const [problems, setProblems] = useState<PlanProblem[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [pending, setPending] = useState(false);

  useEffect(() => {
    let live = true;
    api.get<State>(`/v1/tasks/${seg(props.taskId)}/commits/${seg(commit.commit_id)}/state`).then(
      (s) => {
        if (!live) return;
        setState(s);
        setPlanText(JSON.stringify(s.plan, null, 2));
        const at = s.plan.find((i) => (i as { seq_no?: unknown }).seq_no === s.pc) ?? s.plan[0];
        const seq = (at as { seq_no?: number } | undefined)?.seq_no;
        if (seq !== undefined) {
          setSeqNo(String(seq));
          setStepText(JSON.stringify(at, null, 2));
        }
      },
      (e: unknown) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [commit.commit_id]);

  const pickStep = (value: string) => {
    setSeqNo(value);
    const found = state?.plan.find((i) => String((i as { seq_no?: unknown }).seq_no) === value);
    if (found) setStepText(JSON.stringify(found, null, 2));
    setProblems(null);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setProblems(null);
    const body: Record<string, unknown> = { from_commit: commit.commit_id };
    try {
      if (name.trim()) {
        if (!/^[a-z0-9_-]{1,64}$/.test(name.trim())) {
          throw new ApiError(
            0,
            "bad_name",
            "A branch name is 1 to 64 of a-z, 0-9, _ and - (or leave it empty for a generated one).",
          );
        }
        body.name = name.trim();
      }
      if (mode === "suggestion") {
        if (!suggestion.trim())
          throw new ApiError(
            0,
            "no_suggestion",
            "Write a suggestion: what the planner should do differently from here.",
          );
        body.suggestion = suggestion.trim();
      } else if (mode === "plan") {
        const checked = checkPlanText(planText);
        if (checked.problems.length) {
          setProblems(checked.problems);
          return;
        }
        body.plan = checked.plan;
      } else if (mode === "step") {
        const instruction = parseJsonField(stepText, "The instruction");
        body.step = { seq_no: Number(seqNo), instruction };
      }
    } catch (e) {
      setError(e);
      return;
    }
    setPending(true);
    try {
      const branch = await api.post<Branch>(`/v1/tasks/${seg(props.taskId)}/branches`, body);
      props.onForked(branch, MODES.find((m) => m.key === mode)!.label.toLowerCase());
    } catch (e) {
      const found = e instanceof ApiError ? problemsOf(e.details) : null;
      if (found?.length && mode === "plan") setProblems(found);
      else if (found?.length && mode === "step" && state) {
        setError(e);
        setProblems(found);
      } else setError(e);
    } finally {
      setPending(false);
    }
  };

  return (
    <form class="fork-form card" onSubmit={submit} aria-labelledby="fork-title">
      <h3 id="fork-title">
        Fork from <code>{commitTitle(commit)}</code> on {commit.branch}
      </h3>
      <fieldset class="segmented">
        <legend>How the new branch goes on</legend>
        {MODES.map((m) => (
          <label>
            <input
              type="radio"
              name="fork-mode"
              value={m.key}
              checked={mode === m.key}
              disabled={noLlm && m.key === "suggestion"}
              onChange={() => {
                setMode(m.key);
                setProblems(null);
                setError(null);
              }}
            />
            {m.label}
            {noLlm && m.key === "suggestion" ? " (needs an LLM; none is configured)" : ""}
          </label>
        ))}
      </fieldset>
      {mode === "suggestion" ? (
        <>
          <label for="fork-suggestion">Suggestion for the planner</label>
          <textarea
            id="fork-suggestion"
            rows={3}
            value={suggestion}
            placeholder="e.g. Ask for the facts as a bulleted list"
            onInput={(e: Event) => setSuggestion((e.target as HTMLTextAreaElement).value)}
          />
        </>
      ) : null}
      {mode === "plan" ? (
        <PlanEditor
          id="fork-plan"
          label="The plan from this commit's PC on"
          value={planText}
          rows={12}
          onInput={(v) => {
            setPlanText(v);
            setProblems(null);
          }}
          problems={problems}
        />
      ) : null}
      {mode === "step" ? (
        <>
          <label for="fork-seq">Instruction to replace</label>
          <select
            id="fork-seq"
            value={seqNo}
            onChange={(e: Event) => pickStep((e.target as HTMLSelectElement).value)}
          >
            {(state?.plan ?? []).map((i) => {
              const seq = String((i as { seq_no?: unknown }).seq_no);
              return (
                <option value={seq} selected={seq === seqNo}>
                  seq_no {seq} ({String((i as { type?: unknown }).type)})
                </option>
              );
            })}
          </select>
          <label for="fork-step">The new instruction (JSON)</label>
          <textarea
            id="fork-step"
            class="code"
            rows={8}
            spellcheck={false}
            value={stepText}
            onInput={(e: Event) => setStepText((e.target as HTMLTextAreaElement).value)}
          />
          {problems?.length && state ? (
            <PlanView
              plan={state.plan}
              problems={placeProblems(state.plan, problems)}
              label="The plan with its problems"
            />
          ) : null}
        </>
      ) : null}
      {mode === "rerun" ? (
        <p class="muted">
          The new branch starts from the state at this commit and runs the plan it had.
        </p>
      ) : null}
      <label for="fork-name">Branch name (optional)</label>
      <input
        id="fork-name"
        value={name}
        placeholder="generated when empty"
        onInput={(e: Event) => setName((e.target as HTMLInputElement).value)}
      />
      <div class="actions">
        <button type="submit" class="primary" disabled={pending}>
          {pending ? "Forking…" : "Fork"}
        </button>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      <ErrorBox error={error} title="The branch was not forked" />
    </form>
  );
}

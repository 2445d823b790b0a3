/** @jsxImportSource hono/jsx/dom */
/**
 * Starts a task from a goal or from a plan. A plan's text must parse as JSON
 * here; everything else is the API's to judge: "Check plan" asks
 * `POST /v1/plans/validate` without starting anything, and "Start task" shows
 * the 422's problems the same way, each at the instruction it concerns, so the
 * console never finds fewer problems than the API.
 */
import type { Namespace, PlanProblem } from "@stackvm/core";
import { useState } from "hono/jsx/dom";
import { ApiError } from "../api";
import { NO_LLM_KEY, serverHasNoLlm } from "../llm-mode";
import { checkPlanText } from "../plan-check";
import { PlanEditor } from "../plan-editor";
import { problemsOf } from "../plan-problems";
import { type PlanningChoice, PlanningOptions } from "../planning-options";
import { navigate } from "../router";
import { taskPath } from "../routes";
import { ErrorBox, parseJsonField, useApi, useLoad } from "../ui";

/** An example that runs with or without an LLM: its answer is 42. */
const EXAMPLE_PLAN = `[
  {"seq_no": 0, "type": "assign", "parameters": {"a": 6, "b": 7}},
  {"seq_no": 1, "type": "assign", "parameters": {"final_answer": "\${a} * \${b}"}}
]`;

/** How the task's plan is written (`planning` of `POST /v1/tasks`). */

/** The answer of `POST /v1/plans/validate`. */
interface PlanVerdict {
  valid: boolean;
  problems: PlanProblem[];
  warnings: PlanProblem[];
  groups: { members: number[]; name: string | null }[];
}

/** A plan the API accepts: say so, with each warning (StackVM forms rewritten, jumps never reached). */
function PlanVerdictNote(props: { verdict: PlanVerdict; namespace: string }) {
  const { warnings, groups } = props.verdict;
  return (
    <div class="plan-verdict" role="status">
      <p>
        The plan is valid in namespace <code>{props.namespace}</code>
        {groups.length > 0
          ? `; ${groups.length === 1 ? "1 group runs its" : `${groups.length} groups run their`} members at once`
          : ""}
        {warnings.length > 0
          ? `, with ${warnings.length === 1 ? "1 warning" : `${warnings.length} warnings`}:`
          : "."}
      </p>
      {warnings.length > 0 ? (
        <ul class="plan-warnings">
          {warnings.map((w) => (
            <li>
              {w.seq_no === null ? "" : `seq_no ${w.seq_no}: `}
              {w.message} <span class="muted">{w.hint}</span>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function NewTaskPage() {
  const api = useApi();
  // With no LLM a goal cannot run: open where something can. The server's page says
  // so; a 422 llm_not_configured from an older server is remembered for this session.
  const [noLlm, setNoLlm] = useState(() => serverHasNoLlm(document, sessionStorage));
  const [mode, setMode] = useState<"goal" | "plan">(noLlm ? "plan" : "goal");
  const [goal, setGoal] = useState("");
  const [planText, setPlanText] = useState(EXAMPLE_PLAN);
  const [lang, setLang] = useState("");
  const [format, setFormat] = useState("");
  const [namespace, setNamespace] = useState("default");
  /** Empty: the namespace's planning mode. */
  const [planning, setPlanning] = useState<"" | PlanningChoice>("");
  const [maxSteps, setMaxSteps] = useState("200");
  const [evaluate, setEvaluate] = useState(false);
  const [inputsText, setInputsText] = useState("");
  const [problems, setProblems] = useState<PlanProblem[] | null>(null);
  const [verdict, setVerdict] = useState<PlanVerdict | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [pending, setPending] = useState(false);
  const namespaces = useLoad(() => api.get<{ namespaces: Namespace[] }>("/v1/namespaces"), []);
  const namespaceMode =
    namespaces.data?.namespaces.find((ns) => ns.name === namespace)?.planning ?? "up_front";

  /** Inputs as an object, or an ApiError that says how to write them. */
  const readInputs = (): Record<string, unknown> | undefined => {
    if (!inputsText.trim()) return undefined;
    const inputs = parseJsonField(inputsText, "Inputs");
    if (typeof inputs !== "object" || inputs === null || Array.isArray(inputs)) {
      throw new ApiError(
        0,
        "bad_inputs",
        'Inputs must be a JSON object, like {"topic": "otters"}.',
      );
    }
    return inputs as Record<string, unknown>;
  };

  const check = async () => {
    setError(null);
    setProblems(null);
    setVerdict(null);
    const checked = checkPlanText(planText);
    if (checked.problems.length > 0) {
      setProblems(checked.problems);
      return;
    }
    setPending(true);
    try {
      const inputs = readInputs();
      const answer = await api.post<PlanVerdict>("/v1/plans/validate", {
        plan: checked.plan,
        namespace,
        inputs: Object.keys(inputs ?? {}),
      });
      setVerdict(answer);
      if (!answer.valid) setProblems(answer.problems);
    } catch (e) {
      setError(e);
    } finally {
      setPending(false);
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setProblems(null);
    setVerdict(null);
    const body: Record<string, unknown> = { namespace };
    try {
      if (goal.trim()) body.goal = goal.trim();
      if (mode === "plan") {
        const checked = checkPlanText(planText);
        if (checked.problems.length > 0) {
          setProblems(checked.problems);
          return;
        }
        body.plan = checked.plan;
      } else if (!goal.trim()) {
        throw new ApiError(0, "no_goal", "Write a goal: what the task should find out or produce.");
      }
      const responseFormat: Record<string, string> = {};
      if (lang.trim()) responseFormat.lang = lang.trim();
      if (format.trim()) responseFormat.format = format.trim();
      if (Object.keys(responseFormat).length) body.response_format = responseFormat;
      const steps = Number(maxSteps);
      if (!Number.isInteger(steps) || steps < 1) {
        throw new ApiError(0, "bad_budget", "Max steps must be a whole number of 1 or more.");
      }
      body.budget = { max_steps: steps };
      if (evaluate) body.evaluate = true;
      if (planning) body.planning = planning;
      const inputs = readInputs();
      if (inputs) body.inputs = inputs;
    } catch (e) {
      setError(e);
      return;
    }
    setPending(true);
    try {
      const created = await api.post<{ task_id: string }>("/v1/tasks", body);
      navigate(taskPath(created.task_id));
    } catch (e) {
      const found = e instanceof ApiError ? problemsOf(e.details) : null;
      if (found && found.length > 0 && mode === "plan") setProblems(found);
      else setError(e);
      if (e instanceof ApiError && e.code === "llm_not_configured") {
        // Only a plan can run here: switch to it now and open in it next time.
        sessionStorage.setItem(NO_LLM_KEY, "1");
        setNoLlm(true);
        setMode("plan");
      }
    } finally {
      setPending(false);
    }
  };

  return (
    <section aria-labelledby="new-task-title">
      <div class="page-head">
        <h1 id="new-task-title">New task</h1>
      </div>
      <form class="card form" onSubmit={submit}>
        <fieldset class="segmented">
          <legend>Start from</legend>
          <label>
            <input
              type="radio"
              name="mode"
              value="goal"
              checked={mode === "goal"}
              onChange={() => setMode("goal")}
            />
            a goal (the planner writes the plan)
          </label>
          <label>
            <input
              type="radio"
              name="mode"
              value="plan"
              checked={mode === "plan"}
              onChange={() => setMode("plan")}
            />
            a plan (JSON, run as is)
          </label>
        </fieldset>

        {noLlm ? (
          <p class="muted" id="no-llm-note">
            This server has no LLM configured, so a goal cannot be planned: start from a plan (the
            example runs without one), or configure an LLM (<code>stackvm doctor</code> says how).
          </p>
        ) : null}

        <label for="goal">Goal{mode === "plan" ? " (optional)" : ""}</label>
        <textarea
          id="goal"
          rows={3}
          value={goal}
          placeholder="What should the task find out or produce?"
          onInput={(e: Event) => setGoal((e.target as HTMLTextAreaElement).value)}
        />

        {mode === "plan" ? (
          <PlanEditor
            id="plan"
            label="Plan"
            value={planText}
            onInput={(v) => {
              setPlanText(v);
              setProblems(null);
              setVerdict(null);
            }}
            problems={problems}
          />
        ) : null}

        <div class="grid-3">
          <div>
            <label for="lang">Answer language</label>
            <input
              id="lang"
              value={lang}
              placeholder="e.g. Japanese"
              onInput={(e: Event) => setLang((e.target as HTMLInputElement).value)}
            />
          </div>
          <div>
            <label for="format">Answer format</label>
            <input
              id="format"
              value={format}
              placeholder="e.g. markdown table"
              onInput={(e: Event) => setFormat((e.target as HTMLInputElement).value)}
            />
          </div>
          <div>
            <label for="namespace">Namespace</label>
            <select
              id="namespace"
              value={namespace}
              onChange={(e: Event) => setNamespace((e.target as HTMLSelectElement).value)}
            >
              {(namespaces.data?.namespaces ?? [{ name: "default" } as Namespace]).map((ns) => (
                <option value={ns.name} selected={ns.name === namespace}>
                  {ns.name}
                </option>
              ))}
            </select>
          </div>
        </div>

        <label for="planning">Planning</label>
        <select
          id="planning"
          value={planning}
          onChange={(e: Event) =>
            setPlanning((e.target as HTMLSelectElement).value as "" | PlanningChoice)
          }
        >
          <option value="" selected={planning === ""}>
            the namespace's ({namespaceMode === "adaptive" ? "adaptive" : "up front"})
          </option>
          <PlanningOptions selected={planning} />
        </select>

        <details>
          <summary>Budget, evaluation and inputs</summary>
          <div class="grid-3">
            <div>
              <label for="max-steps">Max steps</label>
              <input
                id="max-steps"
                type="number"
                min={1}
                value={maxSteps}
                onInput={(e: Event) => setMaxSteps((e.target as HTMLInputElement).value)}
              />
            </div>
            <label class="check">
              <input
                type="checkbox"
                checked={evaluate}
                onChange={(e: Event) => setEvaluate((e.target as HTMLInputElement).checked)}
              />
              Evaluate the answer (a judge may fork a better branch)
            </label>
          </div>
          <label for="inputs">Inputs (JSON object of variables, optional)</label>
          <textarea
            id="inputs"
            class="code"
            rows={3}
            value={inputsText}
            placeholder='{"topic": "otters"}'
            onInput={(e: Event) => setInputsText((e.target as HTMLTextAreaElement).value)}
          />
        </details>

        <div class="actions">
          <button type="submit" class="primary" disabled={pending}>
            {pending ? "Working…" : "Start task"}
          </button>
          {mode === "plan" ? (
            <button type="button" disabled={pending} onClick={check}>
              Check plan
            </button>
          ) : null}
        </div>
        {verdict?.valid ? <PlanVerdictNote verdict={verdict} namespace={namespace} /> : null}
        <ErrorBox error={error} title="The task was not started" />
        {problems && problems.length > 0 ? (
          <p class="error-text" role="alert">
            {verdict
              ? "Fix the plan's problems shown above, then check it again or start the task."
              : "The task was not started: fix the plan's problems shown above."}
          </p>
        ) : null}
      </form>
    </section>
  );
}

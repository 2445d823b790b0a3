/** @jsxImportSource hono/jsx/dom */
/**
 * A waiting branch on the task page. One that asks a question (`ask_human`)
 * gets a form built from its answer's JSON Schema (`answer-form.ts`), sent to
 * `POST /v1/tasks/{id}/branches/{branch}/input` as the console's answer; an
 * answer the server refuses (422: it does not match the schema) is shown at
 * the form, and the branch keeps waiting. One that waits for a time says when
 * it resumes.
 */
import type { Branch } from "@stackvm/core";
import { type Child, useMemo, useState } from "hono/jsx/dom";
import {
  type AnswerForm,
  answerForm,
  answerOf,
  type Field,
  type FieldValues,
  initialValues,
} from "./answer-form";
import { ApiError, seg } from "./api";
import { when } from "./format";
import { ErrorBox, useApi } from "./ui";

function FieldInput(props: {
  field: Field;
  id: string;
  value: string | boolean | undefined;
  problem: string | undefined;
  onChange: (value: string | boolean) => void;
}) {
  const { field, id } = props;
  const described = props.problem ? `${id}-problem` : undefined;
  const label = (
    <label for={id}>
      {field.label}
      {field.required && field.kind !== "boolean" ? (
        <span class="required"> (required)</span>
      ) : null}
    </label>
  );
  let input: Child;
  if (field.kind === "boolean") {
    return (
      <div class="field check" data-field={field.name}>
        <label>
          <input
            id={id}
            type="checkbox"
            checked={props.value === true}
            onChange={(e: Event) => props.onChange((e.target as HTMLInputElement).checked)}
          />
          {field.label}
        </label>
        {field.description ? <p class="muted small">{field.description}</p> : null}
      </div>
    );
  }
  if (field.kind === "enum") {
    input = (
      <select
        id={id}
        aria-describedby={described}
        onChange={(e: Event) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        <option value="" selected={props.value === ""}>
          Choose…
        </option>
        {field.options.map((option, i) => (
          <option value={String(i)} selected={props.value === String(i)}>
            {typeof option === "string" ? option : JSON.stringify(option)}
          </option>
        ))}
      </select>
    );
  } else {
    input = (
      <input
        id={id}
        type={field.kind === "string" ? "text" : "number"}
        step={field.kind === "integer" ? "1" : "any"}
        aria-describedby={described}
        aria-invalid={props.problem ? "true" : undefined}
        value={String(props.value ?? "")}
        onInput={(e: Event) => props.onChange((e.target as HTMLInputElement).value)}
      />
    );
  }
  return (
    <div class="field" data-field={field.name}>
      {label}
      {field.description ? <p class="muted small">{field.description}</p> : null}
      {input}
      {props.problem ? (
        <p id={described} class="field-problem" role="alert">
          {props.problem}
        </p>
      ) : null}
    </div>
  );
}

function QuestionForm(props: { taskId: string; branch: Branch; onAnswered: () => void }) {
  const api = useApi();
  const waiting = props.branch.waiting!;
  const form: AnswerForm = useMemo(() => answerForm(waiting.schema), [waiting.schema]);
  const [values, setValues] = useState<FieldValues>(() => initialValues(form));
  const [json, setJson] = useState("");
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [pending, setPending] = useState(false);
  const prefix = `answer-${props.branch.name}`;

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const built = answerOf(form, values, json);
    if (!built.ok) {
      setProblems(built.problems);
      return;
    }
    setProblems({});
    setPending(true);
    try {
      await api.post(`/v1/tasks/${seg(props.taskId)}/branches/${seg(props.branch.name)}/input`, {
        answer: built.answer,
        source: "console",
      });
      props.onAnswered();
    } catch (e) {
      setError(e);
    } finally {
      setPending(false);
    }
  };

  const fields = form.mode === "value" ? [form.field] : form.mode === "object" ? form.fields : [];
  const refused = error instanceof ApiError && error.status === 422;
  return (
    <form class="answer-form" onSubmit={submit} aria-label={`Answer for ${props.branch.name}`}>
      {fields.map((field) => (
        <FieldInput
          field={field}
          id={`${prefix}-${field.name}`}
          value={values[field.name]}
          problem={problems[field.name]}
          onChange={(value) => setValues({ ...values, [field.name]: value })}
        />
      ))}
      {form.mode === "json" ? (
        <div class="field" data-field="json">
          <label for={`${prefix}-json`}>Answer (JSON)</label>
          <details>
            <summary class="muted small">The schema it must match</summary>
            <pre class="code">{JSON.stringify(waiting.schema, null, 2)}</pre>
          </details>
          <textarea
            id={`${prefix}-json`}
            class="code"
            rows={6}
            spellcheck={false}
            value={json}
            onInput={(e: Event) => setJson((e.target as HTMLTextAreaElement).value)}
          />
          {problems.json ? (
            <p class="field-problem" role="alert">
              {problems.json}
            </p>
          ) : null}
        </div>
      ) : null}
      <div class="actions">
        <button type="submit" class="primary" disabled={pending}>
          {pending ? "Sending…" : "Send answer"}
        </button>
      </div>
      <ErrorBox
        error={error}
        title={
          refused
            ? "The answer does not fit the question; the branch still waits"
            : "The answer was not sent"
        }
      />
    </form>
  );
}

/** The waiting branches of a task, each with its question's form or its wake time. */
export function WaitingBranches(props: {
  taskId: string;
  branches: Branch[];
  onAnswered: (branch: string) => void;
}) {
  const waiting = props.branches.filter((b) => b.status === "waiting" && b.waiting);
  if (waiting.length === 0) return null;
  return (
    <section class="card waiting-branches" aria-labelledby="waiting-title">
      <h2 id="waiting-title">Waiting</h2>
      {waiting.map((branch) => {
        const w = branch.waiting!;
        return (
          <div class="question" data-branch={branch.name} data-kind={w.kind}>
            <p class="muted small">
              Branch <strong>{branch.name}</strong>
              {w.expires_at ? (
                <>
                  {" "}
                  · times out at <time dateTime={w.expires_at}>{when(w.expires_at)}</time>
                </>
              ) : null}
            </p>
            {w.kind === "input" ? (
              <>
                <p class="question-text">{w.question}</p>
                <QuestionForm
                  taskId={props.taskId}
                  branch={branch}
                  onAnswered={() => props.onAnswered(branch.name)}
                />
              </>
            ) : (
              <p>
                Resumes at <time dateTime={w.until ?? ""}>{w.until ? when(w.until) : "?"}</time>,
                and nothing runs until then.
              </p>
            )}
          </div>
        );
      })}
    </section>
  );
}

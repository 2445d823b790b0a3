/** @jsxImportSource hono/jsx/dom */
/**
 * One commit: what ran (as written and with references resolved), its outputs,
 * its LLM calls (each one's prompt and answer opened in place), its error; the VM state there (variables, and the plan with
 * the PC marked); the diff; and the actions that start from a commit (fork,
 * save the plan as a template).
 */
import type { Branch, Commit, State } from "@stackvm/core";
import { useState } from "hono/jsx/dom";
import { seg } from "./api";
import { chunkSources, citedChunks } from "./citations";
import { DiffView } from "./diff-view";
import { ForkForm } from "./fork-form";
import { count, ms, usd, when } from "./format";
import { commitTitle } from "./instruction-text";
import { JsonView } from "./json-view";
import { LlmTraceView } from "./llm-trace";
import { OutputFiles, outputFiles } from "./output-files";
import { PlanView } from "./plan-view";
import { ActionResult, ErrorBox, Tabs, useAction, useApi, useLoad } from "./ui";

export type CommitTab = "commit" | "state" | "diff";

const TABS: ReadonlyArray<{ key: CommitTab; label: string }> = [
  { key: "commit", label: "Commit" },
  { key: "state", label: "State" },
  { key: "diff", label: "Diff" },
];

function Section(props: { title: string; children?: unknown; hidden?: boolean }) {
  if (props.hidden) return null;
  return (
    <section class="commit-section">
      <h3>{props.title}</h3>
      {props.children as never}
    </section>
  );
}

function LlmCalls(props: { taskId: string; commit: Commit }) {
  const { commit } = props;
  const [open, setOpen] = useState<number | null>(null);
  return (
    <div class="table-wrap">
      <table class="llm-calls">
        <thead>
          <tr>
            <th scope="col">Purpose</th>
            <th scope="col">Model</th>
            <th scope="col" class="num">
              Tokens in / out
            </th>
            <th scope="col" class="num">
              Cost
            </th>
            <th scope="col" class="num">
              Latency
            </th>
            <th scope="col">Prompt and answer</th>
          </tr>
        </thead>
        <tbody>
          {commit.llm_calls.map((call, n) => (
            <>
              <tr>
                <td>{call.purpose}</td>
                <td>{call.model}</td>
                <td class="num">
                  {count(call.input_tokens)} / {count(call.output_tokens)}
                </td>
                <td class="num">{usd(call.cost_usd)}</td>
                <td class="num">
                  {ms(call.latency_ms)}
                  {call.attempts && call.attempts > 1 ? ` (${call.attempts} tries)` : ""}
                </td>
                <td>
                  {call.trace ? (
                    <button
                      type="button"
                      class="link"
                      aria-expanded={open === n ? "true" : "false"}
                      onClick={() => setOpen(open === n ? null : n)}
                    >
                      {open === n ? "Close" : "Open"}
                    </button>
                  ) : (
                    <span class="muted">not kept</span>
                  )}
                </td>
              </tr>
              {open === n ? (
                <tr class="llm-trace-row">
                  <td colSpan={6}>
                    <LlmTraceView taskId={props.taskId} commitId={commit.commit_id} n={n} />
                  </td>
                </tr>
              ) : null}
            </>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The documents and positions of the chunks a commit's outputs cite (`citations.ts`). */
function CitedSources(props: { commit: Commit; commits: ReadonlyMap<string, Commit> }) {
  const sources = chunkSources([...props.commits.values()].map((c) => c.outputs));
  const cited = citedChunks(props.commit.outputs, sources);
  if (cited.length === 0) return null;
  return (
    <Section title="Cited sources">
      <ul class="cited-sources">
        {cited.map((c) => (
          <li data-chunk={c.chunk_id}>
            <strong>{c.filename}</strong>, position {c.position}{" "}
            <code class="small">{c.chunk_id}</code>
          </li>
        ))}
      </ul>
    </Section>
  );
}

function CommitDetails(props: {
  taskId: string;
  commit: Commit;
  commits: ReadonlyMap<string, Commit>;
  onSelect: (id: string) => void;
}) {
  const { commit } = props;
  const error = commit.error as { code?: string; message?: string } | null;
  return (
    <div class="commit-details">
      <dl class="facts">
        <dt>Commit</dt>
        <dd>
          <code>{commit.commit_id}</code>
        </dd>
        <dt>Parent</dt>
        <dd>
          {commit.parent_id ? (
            <button type="button" class="link" onClick={() => props.onSelect(commit.parent_id!)}>
              <code>{commit.parent_id}</code>
            </button>
          ) : (
            "none (first commit)"
          )}
        </dd>
        <dt>Branch</dt>
        <dd>{commit.branch}</dd>
        <dt>PC</dt>
        <dd>
          {commit.pc_before ?? "—"} → {commit.pc_after ?? "—"}
        </dd>
        <dt>When</dt>
        <dd>
          {when(commit.created_at)} · took {ms(commit.duration_ms)}
        </dd>
      </dl>
      {error ? (
        <div class="error-box" role="note">
          <strong>Error{error.code ? ` (${error.code})` : ""}</strong>
          <p>{typeof error.message === "string" ? error.message : JSON.stringify(error)}</p>
        </div>
      ) : null}
      <Section title="Instruction, as written" hidden={commit.instruction === null}>
        <JsonView value={commit.instruction} />
      </Section>
      <Section title="Inputs, references resolved" hidden={commit.inputs === null}>
        <JsonView value={commit.inputs} />
      </Section>
      <Section title="Outputs">
        {Object.keys(commit.outputs).length === 0 ? (
          <p class="muted">No variable set.</p>
        ) : (
          <JsonView value={commit.outputs} />
        )}
      </Section>
      <Section title="Files written" hidden={outputFiles(commit.details).length === 0}>
        <OutputFiles taskId={props.taskId} files={outputFiles(commit.details)} />
      </Section>
      <CitedSources commit={commit} commits={props.commits} />
      <Section title="LLM calls" hidden={commit.llm_calls.length === 0}>
        <LlmCalls key={commit.commit_id} taskId={props.taskId} commit={commit} />
      </Section>
      <Section title="Details" hidden={!commit.details || Object.keys(commit.details).length === 0}>
        <JsonView value={commit.details} />
      </Section>
    </div>
  );
}

function StateTab(props: { taskId: string; commit: Commit }) {
  const api = useApi();
  const state = useLoad(
    () =>
      api.get<State>(`/v1/tasks/${seg(props.taskId)}/commits/${seg(props.commit.commit_id)}/state`),
    [props.commit.commit_id],
  );
  if (state.error) return <ErrorBox error={state.error} title="Could not load the state" />;
  if (!state.data) return <p class="muted">Loading the state…</p>;
  const { variables, plan, pc, completed } = state.data;
  const names = Object.keys(variables).sort();
  return (
    <div class="state-view">
      <p>
        PC <strong>{pc ?? "—"}</strong>
        {completed ? <span class="badge status-completed">completed</span> : null}
      </p>
      <h3>Variables</h3>
      {names.length === 0 ? (
        <p class="muted">No variables yet.</p>
      ) : (
        <dl class="variables">
          {names.map((name) => (
            <>
              <dt>
                <code>{name}</code>
              </dt>
              <dd>
                <JsonView value={variables[name]} />
              </dd>
            </>
          ))}
        </dl>
      )}
      <h3>Plan</h3>
      <PlanView plan={plan} pc={pc} label="Plan at this commit" />
    </div>
  );
}

export function CommitPanel(props: {
  taskId: string;
  commit: Commit;
  commits: ReadonlyMap<string, Commit>;
  tab: CommitTab;
  against: string | null;
  picking: boolean;
  onTab: (tab: CommitTab) => void;
  onSelect: (id: string) => void;
  onPick: () => void;
  onClearAgainst: () => void;
  onForked: (branch: Branch, how: string) => void;
  /** The task has a goal: only then can its plan be saved as a template (the API answers 422 `no_goal`). */
  canSaveTemplate: boolean;
}) {
  const api = useApi();
  const { commit } = props;
  const [forking, setForking] = useState(false);
  const save = useAction();

  return (
    <section class="commit-panel card" aria-labelledby="commit-title">
      <div class="panel-head">
        <h2 id="commit-title">
          <span class={`type-tag type-${commit.type}`}>{commitTitle(commit)}</span>
          <span class="muted small"> on {commit.branch}</span>
        </h2>
        <div class="row">
          <button
            type="button"
            class="primary"
            onClick={() => setForking(!forking)}
            aria-expanded={forking ? "true" : "false"}
          >
            Fork from here…
          </button>
          {props.canSaveTemplate ? (
            <button
              type="button"
              disabled={save.pending}
              onClick={() =>
                save.run(async () => {
                  const saved = await api.post<{ template_id: string }>(
                    `/v1/tasks/${seg(props.taskId)}/commits/${seg(commit.commit_id)}/save-plan`,
                  );
                  return (
                    <>
                      Saved the plan at this commit as template <code>{saved.template_id}</code>.
                    </>
                  );
                })
              }
            >
              Save plan as template
            </button>
          ) : null}
        </div>
      </div>
      <ActionResult action={save} title="The plan was not saved" />
      {forking ? (
        <ForkForm
          taskId={props.taskId}
          commit={commit}
          onClose={() => setForking(false)}
          onForked={(branch, how) => {
            setForking(false);
            props.onForked(branch, how);
          }}
        />
      ) : null}
      <Tabs tabs={TABS} active={props.tab} onChange={props.onTab} label="Commit views" />
      <div class="tab-body" role="tabpanel">
        {props.tab === "commit" ? (
          <CommitDetails
            taskId={props.taskId}
            commit={commit}
            commits={props.commits}
            onSelect={props.onSelect}
          />
        ) : null}
        {props.tab === "state" ? <StateTab taskId={props.taskId} commit={commit} /> : null}
        {props.tab === "diff" ? (
          <DiffView
            taskId={props.taskId}
            commit={commit}
            against={props.against}
            commits={props.commits}
            picking={props.picking}
            onPick={props.onPick}
            onClear={props.onClearAgainst}
          />
        ) : null}
      </div>
    </section>
  );
}

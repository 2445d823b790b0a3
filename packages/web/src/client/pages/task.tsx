/** @jsxImportSource hono/jsx/dom */
/**
 * A task: its goal, status, usage and answer; its branches; the history as a
 * branch graph (or the PC chart), live while anything runs; and the selected
 * commit. Selection, the compared commit, the tab and the view are in the URL,
 * so any of them can be linked.
 */
import type { Branch, Commit } from "@stackvm/core";
import { useEffect, useMemo, useState } from "hono/jsx/dom";
import { seg } from "../api";
import { BranchGraph } from "../branch-graph";
import { BranchList } from "../branch-list";
import { CommitPanel, type CommitTab } from "../commit-panel";
import { age, count, usd, when } from "../format";
import { layoutGraph } from "../graph-layout";
import { RunningGroups } from "../group-block";
import { commitTitle } from "../instruction-text";
import { JsonView } from "../json-view";
import { markdownToHtml } from "../markdown";
import { PcChart } from "../pc-chart";
import { WaitingBranches } from "../question-card";
import { Link, navigate, setQuery, useLocation } from "../router";
import { BASE } from "../routes";
import { TERMINAL } from "../status";
import { TaskFeed, type TaskSnapshot, type WritingText } from "../task-feed";
import { taskTitle } from "../task-title";
import { ThreadTurns } from "../thread-turns";
import {
  ActionResult,
  ConfirmButton,
  ErrorBox,
  Notice,
  StatusBadge,
  useAction,
  useApi,
} from "../ui";
import { noCommitText, RetryButtons, TaskWhy } from "../why-card";

function Answer(props: { value: unknown }) {
  if (props.value === null || props.value === undefined) return null;
  return (
    <section class="card answer" aria-labelledby="answer-title">
      <h2 id="answer-title">Final answer</h2>
      {typeof props.value === "string" ? (
        <div class="markdown" dangerouslySetInnerHTML={{ __html: markdownToHtml(props.value) }} />
      ) : (
        <JsonView value={props.value} />
      )}
    </section>
  );
}

/** The text running steps' LLM calls are writing, growing as it comes; gone once they commit. */
function BeingWritten(props: { writing: WritingText[] }) {
  if (props.writing.length === 0) return null;
  return (
    <section class="card answer writing" aria-labelledby="writing-title" aria-live="polite">
      <h2 id="writing-title">Being written</h2>
      {props.writing.map((w) => (
        <div key={`${w.branch}#${w.parent_id}`} class="writing-step">
          <p class="muted">
            {w.final_answer
              ? "the final answer"
              : w.purpose === "llm_generate"
                ? "a step"
                : "the plan"}
            {w.seq_no === null ? "" : ` · [${w.seq_no}]`}
            {w.branch === "main" ? "" : ` · ${w.branch}`}
          </p>
          <pre class="writing-text">{w.text}</pre>
        </div>
      ))}
    </section>
  );
}

export function TaskPage(props: { taskId: string }) {
  const api = useApi();
  const { search } = useLocation();
  const [snapshot, setSnapshot] = useState<TaskSnapshot | null>(null);
  const [feed, setFeed] = useState<TaskFeed | null>(null);
  const [filter, setFilter] = useState("");
  const [picking, setPicking] = useState(false);
  const [forked, setForked] = useState<{ branch: Branch; how: string; from: Commit } | null>(null);
  const taskAction = useAction();

  useEffect(() => {
    const f = new TaskFeed(api, props.taskId, setSnapshot);
    setFeed(f);
    setSnapshot(f.current);
    f.start();
    return () => f.stop();
  }, [props.taskId]);

  const branches = snapshot?.branches ?? [];
  const commits = snapshot?.commits ?? new Map<string, Commit>();
  const task = snapshot?.task ?? null;
  const layout = useMemo(() => layoutGraph(commits.values(), branches), [commits, branches]);

  const view = search.get("view") === "pc" ? "pc" : "graph";
  const tab = (
    ["commit", "state", "diff"].includes(search.get("tab") ?? "") ? search.get("tab") : "commit"
  ) as CommitTab;
  const against = search.get("against");
  const resultHead = branches.find((b) => b.name === task?.branch)?.head ?? null;
  const selectedId = search.get("commit") ?? resultHead ?? layout.rows[0]?.commit.commit_id ?? null;
  const selected = selectedId ? commits.get(selectedId) : undefined;

  const select = (id: string, compare = false) => {
    if (compare || picking) {
      setPicking(false);
      setQuery({ against: id === selectedId ? null : id, tab: "diff" });
    } else {
      setQuery({ commit: id });
    }
  };

  if (snapshot?.error && !task) {
    return (
      <ErrorBox error={snapshot.error} title="Could not load this task">
        <p>
          <Link href={BASE}>Back to the tasks</Link>
        </p>
      </ErrorBox>
    );
  }
  if (!task) return <p class="muted">Loading the task…</p>;

  const running = !TERMINAL.has(task.status);
  return (
    <div class="task-page">
      <section class="card task-head" aria-labelledby="task-title">
        <div class="task-title-row">
          <h1 id="task-title">{taskTitle(task)}</h1>
          <StatusBadge status={task.status} />
          {snapshot?.live ? (
            <span
              class="live"
              data-mode={snapshot.live}
              title={snapshot.live === "stream" ? "following the event stream" : "polling"}
            >
              ● live
            </span>
          ) : null}
        </div>
        <dl class="facts inline-facts">
          <div>
            <dt>Task</dt>
            <dd>
              <code>{task.task_id}</code>
            </dd>
          </div>
          <div>
            <dt>Namespace</dt>
            <dd>{task.namespace}</dd>
          </div>
          <div>
            <dt>Planning</dt>
            <dd
              data-fact="planning"
              title={
                task.planning === "adaptive"
                  ? "the planner writes the next instruction or few after each result"
                  : "the whole plan was written before the first step"
              }
            >
              {task.planning === "adaptive" ? "adaptive" : "up front"}
            </dd>
          </div>
          <div>
            <dt>Result branch</dt>
            <dd data-fact="branch">{task.branch}</dd>
          </div>
          <div>
            <dt>Started</dt>
            <dd title={when(task.created_at)}>{age(task.created_at)}</dd>
          </div>
          <div>
            <dt>Steps</dt>
            <dd>{task.usage.steps}</dd>
          </div>
          <div>
            <dt>LLM calls</dt>
            <dd>{task.usage.llm_calls}</dd>
          </div>
          <div>
            <dt>Tokens</dt>
            <dd>
              {count(task.usage.input_tokens)} in / {count(task.usage.output_tokens)} out
            </dd>
          </div>
          <div>
            <dt>Cost</dt>
            <dd>{usd(task.usage.cost_usd)}</dd>
          </div>
        </dl>
        <div class="row">
          {running ? (
            <ConfirmButton
              label="Cancel task"
              question="Stop every running branch at its next step?"
              confirmLabel="Yes, cancel"
              disabled={taskAction.pending}
              onConfirm={() =>
                taskAction.run(async () => {
                  await api.post(`/v1/tasks/${seg(task.task_id)}/cancel`);
                  await feed?.refresh();
                  return "Cancelled: running branches stop at their next step boundary.";
                })
              }
            />
          ) : null}
          <RetryButtons task={task} onRetried={() => void feed?.refresh()} />
          <ConfirmButton
            label="Delete task"
            question="Delete this task with all its branches, commits and artifacts?"
            confirmLabel="Yes, delete"
            disabled={taskAction.pending}
            onConfirm={() =>
              taskAction.run(async () => {
                await api.delete(`/v1/tasks/${seg(task.task_id)}`);
                navigate(BASE);
                return "Deleted.";
              })
            }
          />
        </div>
        <ActionResult action={taskAction} title="The task was not changed" />
        <TaskWhy task={task} />
        {task.error ? (
          <div class="error-box" role="note">
            <strong>The task {task.status === "cancelled" ? "was cancelled" : "failed"}</strong>
            <p>{task.error}</p>
          </div>
        ) : null}
        {snapshot?.error ? <ErrorBox error={snapshot.error} title="Could not refresh" /> : null}
      </section>

      <BeingWritten writing={snapshot?.writing ?? []} />
      <Answer value={task.final_answer} />
      <ThreadTurns task={task} refreshKey={task.status} />
      <WaitingBranches
        taskId={task.task_id}
        branches={branches}
        onAnswered={() => void feed?.refresh()}
      />
      <RunningGroups branches={branches} commits={commits} />

      <div class="task-grid">
        <div class="history">
          <BranchList
            taskId={task.task_id}
            branches={branches}
            lanes={layout.lanes}
            commits={commits}
            resultBranch={task.branch}
            highlight={forked?.branch.name ?? null}
            onSelect={(id) => select(id)}
            onChanged={(reload) => void (reload ? feed?.reload() : feed?.refresh())}
          />
          <section class="card" aria-labelledby="history-title">
            <div class="history-head">
              <h2 id="history-title">History</h2>
              <div class="row">
                <fieldset class="toggle">
                  <legend class="sr-only">View</legend>
                  <button
                    type="button"
                    aria-pressed={view === "graph" ? "true" : "false"}
                    onClick={() => setQuery({ view: null })}
                  >
                    Graph
                  </button>
                  <button
                    type="button"
                    aria-pressed={view === "pc" ? "true" : "false"}
                    onClick={() => setQuery({ view: "pc" })}
                  >
                    PC over time
                  </button>
                </fieldset>
                <input
                  type="search"
                  aria-label="Search commits"
                  placeholder="Search commits"
                  value={filter}
                  onInput={(e: Event) => setFilter((e.target as HTMLInputElement).value)}
                />
              </div>
            </div>
            {picking ? (
              <p class="notice" role="status">
                Click the commit to compare with (Shift+click does this any time).
              </p>
            ) : null}
            {view === "pc" ? (
              <PcChart
                commits={[...commits.values()]}
                lanes={layout.lanes}
                selected={selectedId}
                onSelect={(id) => select(id)}
              />
            ) : null}
            <BranchGraph
              layout={layout}
              selected={selectedId}
              against={against}
              resultBranch={task.branch}
              filter={filter}
              onSelect={select}
            />
          </section>
        </div>
        <div class="detail">
          {forked ? (
            <Notice>
              Forked branch <strong>{forked.branch.name}</strong> ({forked.how}) from{" "}
              {commitTitle(forked.from)} on {forked.from.branch}. It runs now; its commits appear in
              the graph as they land.
            </Notice>
          ) : null}
          {selected ? (
            <CommitPanel
              taskId={task.task_id}
              canSaveTemplate={task.goal !== null}
              commit={selected}
              commits={commits}
              tab={tab}
              against={against}
              picking={picking}
              onTab={(t) => setQuery({ tab: t === "commit" ? null : t })}
              onSelect={(id) => select(id)}
              onPick={() => setPicking(!picking)}
              onClearAgainst={() => setQuery({ against: null })}
              onForked={(branch, how) => {
                setForked({ branch, how, from: selected });
                void feed?.refresh();
              }}
            />
          ) : (
            <p class="muted card">
              {search.get("commit") && commits.size > 0 ? (
                <>
                  Commit <code>{search.get("commit")}</code> is not in this task's history (its
                  branch may have been deleted).{" "}
                  <button type="button" class="link" onClick={() => setQuery({ commit: null })}>
                    Show the result branch's head
                  </button>
                </>
              ) : (
                noCommitText(task)
              )}
            </p>
          )}
        </div>
      </div>
    </div>
  );
}

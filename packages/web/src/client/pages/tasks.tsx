/** @jsxImportSource hono/jsx/dom */
/**
 * The task list: status, goal, age, steps, tokens and cost, newest first, with
 * a status filter and paging by the API's cursors. It refreshes itself while a
 * listed task is still running.
 */
import type { Task } from "@stackvm/core";
import { useEffect, useState } from "hono/jsx/dom";
import { age, count, oneLine, usd, when } from "../format";
import { Link, setQuery, useLocation } from "../router";
import { BASE, taskPath } from "../routes";
import { STATUSES, TERMINAL } from "../status";
import { taskTitle } from "../task-title";
import { ErrorBox, StatusBadge, useApi, useLoad } from "../ui";

const PAGE_SIZE = 20;

export function TasksPage() {
  const api = useApi();
  const { search } = useLocation();
  const status = search.get("status") ?? "";
  const cursor = search.get("cursor");
  // Cursors of the pages before this one: the API pages forward only.
  const [previous, setPrevious] = useState<Array<string | null>>([]);

  const list = useLoad(() => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (status) query.set("status", status);
    if (cursor) query.set("cursor", cursor);
    return api.get<{ tasks: Task[]; next_cursor: string | null }>(`/v1/tasks?${query}`);
  }, [status, cursor]);

  const tasks = list.data?.tasks ?? [];
  const anyLive = tasks.some((t) => !TERMINAL.has(t.status));
  useEffect(() => {
    if (!anyLive) return;
    const timer = setInterval(list.reload, 3000);
    return () => clearInterval(timer);
  }, [anyLive, list.reload]);

  return (
    <section aria-labelledby="tasks-title">
      <div class="page-head">
        <h1 id="tasks-title">Tasks</h1>
        <div class="row">
          <label class="inline">
            Status{" "}
            <select
              value={status}
              onChange={(e: Event) => {
                setPrevious([]);
                setQuery({ status: (e.target as HTMLSelectElement).value, cursor: null });
              }}
            >
              <option value="" selected={status === ""}>
                all
              </option>
              {STATUSES.map((s) => (
                <option value={s} selected={status === s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={list.reload} disabled={list.loading}>
            Refresh
          </button>
          <Link href={`${BASE}/tasks/new`} class="button primary">
            New task
          </Link>
        </div>
      </div>
      <ErrorBox error={list.error} title="Could not load the tasks" />
      {list.data && tasks.length === 0 ? (
        <div class="card empty">
          <p>
            {status ? `No ${status} tasks.` : "No tasks yet."}{" "}
            <Link href={`${BASE}/tasks/new`}>Start one</Link>, or send <code>POST /v1/tasks</code>.
          </p>
        </div>
      ) : null}
      {tasks.length > 0 ? (
        <div class="table-wrap">
          <table class="tasks">
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col">Goal</th>
                <th scope="col" class="wide">
                  Namespace
                </th>
                <th scope="col">Age</th>
                <th scope="col" class="num">
                  Steps
                </th>
                <th scope="col" class="num wide">
                  Tokens
                </th>
                <th scope="col" class="num">
                  Cost
                </th>
              </tr>
            </thead>
            <tbody>
              {tasks.map((task) => (
                <tr data-task={task.task_id}>
                  <td>
                    <StatusBadge status={task.status} />
                  </td>
                  <td class="goal">
                    <Link href={taskPath(task.task_id)} title={task.goal ?? undefined}>
                      {task.goal ? (
                        oneLine(task.goal, 120)
                      ) : (
                        <em>{oneLine(taskTitle(task), 120)}</em>
                      )}
                    </Link>
                    {task.error ? (
                      <div class="muted task-error" title={task.error}>
                        {oneLine(task.error, 140)}
                      </div>
                    ) : null}
                  </td>
                  <td class="wide">{task.namespace}</td>
                  <td title={when(task.created_at)}>{age(task.created_at)}</td>
                  <td class="num">{task.usage.steps}</td>
                  <td class="num wide">
                    {count(task.usage.input_tokens + task.usage.output_tokens)}
                  </td>
                  <td class="num">{usd(task.usage.cost_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <nav class="pager" aria-label="Pages">
        <button
          type="button"
          disabled={previous.length === 0 && !cursor}
          onClick={() => {
            const back = previous.at(-1) ?? null;
            setPrevious(previous.slice(0, -1));
            setQuery({ cursor: back });
          }}
        >
          ← Newer
        </button>
        <button
          type="button"
          disabled={!list.data?.next_cursor}
          onClick={() => {
            setPrevious([...previous, cursor]);
            setQuery({ cursor: list.data?.next_cursor ?? null });
          }}
        >
          Older →
        </button>
      </nav>
    </section>
  );
}

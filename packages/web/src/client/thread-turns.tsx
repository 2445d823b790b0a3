/** @jsxImportSource hono/jsx/dom */
/**
 * A task's thread on its page: the conversation's turns, oldest first, each a
 * link to its task with its goal and status, this task marked. Shown only for
 * a task that is a turn of a thread, or that a turn continues (the thread is
 * named by its first turn's task id: a task nobody continued has none).
 */
import type { Task } from "@stackvm/core";
import { useEffect, useState } from "hono/jsx/dom";
import { seg } from "./api";
import { Link } from "./router";
import { BASE } from "./routes";
import { StatusBadge, useApi } from "./ui";

interface ThreadTurn {
  task_id: string;
  turn: number;
  parent: { task_id: string; branch: string } | null;
  goal: string | null;
  status: string;
}

interface ThreadView {
  thread_id: string;
  turns: ThreadTurn[];
  lines: string[][];
}

export function ThreadTurns(props: { task: Task; refreshKey?: string }) {
  const api = useApi();
  const threadId = props.task.thread?.thread_id ?? props.task.task_id;
  const [thread, setThread] = useState<ThreadView | null>(null);
  useEffect(() => {
    let stale = false;
    api
      .get<ThreadView>(`/v1/threads/${seg(threadId)}`)
      .then((view) => {
        if (!stale) setThread(view);
      })
      .catch(() => {
        // No thread (404) is the usual case, a task nobody continued; the card is left out.
        if (!stale) setThread(null);
      });
    return () => {
      stale = true;
    };
  }, [threadId, props.refreshKey]);
  if (!thread || thread.turns.length < 2) return null;
  return (
    <section class="card thread" aria-labelledby="thread-title">
      <h2 id="thread-title">
        Conversation: {thread.turns.length} turns
        {thread.lines.length > 1 ? `, ${thread.lines.length} lines` : ""}
      </h2>
      <ol class="thread-turns">
        {thread.turns.map((turn) => (
          <li
            key={turn.task_id}
            data-current={turn.task_id === props.task.task_id ? "true" : "false"}
          >
            <span class="muted">Turn {turn.turn}</span>{" "}
            {turn.task_id === props.task.task_id ? (
              <strong>{turn.goal ?? turn.task_id}</strong>
            ) : (
              <Link href={`${BASE}/tasks/${seg(turn.task_id)}`}>{turn.goal ?? turn.task_id}</Link>
            )}{" "}
            <StatusBadge status={turn.status} />
            {turn.parent && turn.parent.branch !== "main" ? (
              <span class="muted"> (continues branch {turn.parent.branch})</span>
            ) : null}
          </li>
        ))}
      </ol>
    </section>
  );
}

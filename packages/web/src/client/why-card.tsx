/** @jsxImportSource hono/jsx/dom */
/**
 * Why a task does not move, where the user looks: a step that failed and will
 * be tried again (its error, the attempt, when the next comes), a place in line
 * for a running slot; and on a task that ended without an answer, the buttons
 * that run it again (`POST /v1/tasks/{id}/retry`).
 */
import type { Task } from "@stackvm/core";
import { seg } from "./api";
import { when } from "./format";
import { ActionResult, useAction, useApi } from "./ui";

/** The retry and the slot wait of a task, or nothing when it is neither. */
export function TaskWhy(props: { task: Task }) {
  const { retrying, waiting_for_slot: slot } = props.task;
  if (retrying) {
    const next = new Date(retrying.next_attempt_at).toLocaleTimeString();
    return (
      <div class="error-box" role="status" data-why="retrying">
        <strong>
          Retrying: attempt {retrying.attempt} of {retrying.max_attempts} failed
        </strong>
        <p>
          <code>{retrying.error.code}</code> {retrying.error.message}
        </p>
        <p class="muted">
          Next attempt at <span title={when(retrying.next_attempt_at)}>{next}</span>
          {`; failing since ${when(retrying.since)}.`}
        </p>
      </div>
    );
  }
  if (slot) {
    return (
      <p class="notice" role="status" data-why="slot">
        Waiting for a running slot: number {slot.position} in line
        {slot.max_running_tasks === null
          ? "."
          : ` (this tenant runs at most ${slot.max_running_tasks} at once, and all are taken).`}
      </p>
    );
  }
  return null;
}

/** What the history says before the first commit. */
export function noCommitText(task: Task): string {
  if (task.waiting_for_slot) return "No commit yet: the task waits for a running slot.";
  if (task.retrying) return "No commit yet: the step failed and will be tried again (see above).";
  return "No commit yet: the planner is writing the plan.";
}

/** "Retry" (from the last commit) and "Retry from start", on a task that failed or was cancelled. */
export function RetryButtons(props: { task: Task; onRetried: () => void }) {
  const api = useApi();
  const action = useAction();
  const { task } = props;
  if (task.status !== "failed" && task.status !== "cancelled") return null;
  const retry = (from: "start" | "last_commit") =>
    action.run(async () => {
      const branch = await api.post<{ name: string }>(`/v1/tasks/${seg(task.task_id)}/retry`, {
        from,
      });
      props.onRetried();
      return `Running again ${from === "start" ? "from the start" : "from the last commit"} on branch ${branch.name}, now the task's result.`;
    });
  return (
    <>
      <button
        type="button"
        class="primary"
        disabled={action.pending}
        title="Run the task again from its last commit: the step that failed runs again"
        onClick={() => void retry("last_commit")}
      >
        Retry
      </button>
      <button
        type="button"
        disabled={action.pending}
        title="Run the task again from its goal (or the plan it was given)"
        onClick={() => void retry("start")}
      >
        Retry from start
      </button>
      <ActionResult action={action} title="The task was not retried" />
    </>
  );
}

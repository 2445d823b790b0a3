/**
 * What a task is called in the list and on its page: the API's `title` (its
 * name, its goal, or its plan's first `llm_generate` prompt). From an API that
 * sends no title: its goal; for a task started from a plan, a `name` in its
 * `metadata`, or the trigger or schedule that started it, or else its task id,
 * so that tasks started from plans can be told apart.
 */

/** The fields of a task that name it. */
export interface Titled {
  task_id: string;
  goal: string | null;
  title?: string | null;
  metadata?: Record<string, unknown> | null;
}

const text = (value: unknown): string | null =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : null;

/**
 * @example
 * taskTitle({ task_id: "tsk_1", goal: null, metadata: { name: "nightly sums" } }) // "nightly sums"
 * taskTitle({ task_id: "tsk_1", goal: null, metadata: { schedule_id: "sch_9" } }) // "plan run by schedule sch_9"
 */
export function taskTitle(task: Titled): string {
  const title = text(task.title);
  if (title) return title;
  const goal = text(task.goal);
  if (goal) return goal;
  const metadata = task.metadata ?? {};
  const name = text(metadata.name);
  if (name) return name;
  const schedule = text(metadata.schedule_id);
  if (schedule) {
    const due = text(metadata.due_at);
    return `plan run by schedule ${schedule}${due ? ` (due ${due})` : ""}`;
  }
  const trigger = text(metadata.trigger_id);
  if (trigger) return `plan started by trigger ${trigger}`;
  return `plan task ${task.task_id}`;
}

/**
 * `stackvm continue TASK --goal "..."`: the next turn of a conversation
 * (`POST /v1/tasks/{id}/continue`), a new task that sees the earlier turns'
 * goals, answers and variables; with `--watch`, followed to its answer.
 */
import { type Command, JSON_OPTION, printJson } from "../command";
import { EXIT, usage } from "../exit-codes";
import { followTask } from "./run";

interface TurnStarted {
  task_id: string;
  thread_id: string;
  status: string;
  branch: string;
}

export const continueCommand: Command = {
  name: "continue",
  summary: "Continue a completed task with a follow-up goal, as the next turn of its thread.",
  usage: "stackvm continue TASK --goal TEXT [--branch NAME] [--watch] [--json]",
  options: {
    goal: { type: "string", description: "the follow-up goal (required)" },
    branch: {
      type: "string",
      description:
        "continue this branch's answer (a fork: a new line of the thread); default: the result branch",
    },
    watch: { type: "boolean", description: "follow the new turn until it ends" },
    ...JSON_OPTION,
  },
  args: ["TASK"],
  async run(ctx, v, [taskId]) {
    const goal = typeof v.goal === "string" ? v.goal.trim() : "";
    if (goal === "") throw usage("--goal is required: the follow-up goal, in words", "continue");
    const body = { goal, ...(typeof v.branch === "string" ? { branch: v.branch } : {}) };
    const turn = await ctx.client.request<TurnStarted>(
      "POST",
      `/v1/tasks/${encodeURIComponent(taskId!)}/continue`,
      { body },
    );
    if (!v.json) {
      ctx.out.line(`task ${turn.task_id} continues ${taskId} (thread ${turn.thread_id})`);
    }
    if (v.watch) return followTask(ctx, turn.task_id, v.json === true);
    if (v.json) printJson(ctx.out, turn);
    else ctx.out.line(`follow it with \`stackvm watch ${turn.task_id}\``);
    return EXIT.ok;
  },
};

/**
 * `stackvm retry TASK [--from start|last-commit]`: runs an ended task again on a
 * new branch that becomes its result (`POST /v1/tasks/{id}/retry`), from its
 * last commit (the failed step runs again) or from the start.
 */
import type { Branch } from "@stackvm/core";
import { type Command, JSON_OPTION, printJson } from "../command";
import { EXIT, usage } from "../exit-codes";
import { followBranch } from "./follow-branch";

const FROM: Record<string, "start" | "last_commit"> = {
  start: "start",
  "last-commit": "last_commit",
  last_commit: "last_commit",
};

export const retryCommand: Command = {
  name: "retry",
  summary: "Run a failed or cancelled task again, from its last commit or from the start.",
  usage: "stackvm retry TASK [--from last-commit|start] [--watch] [--json]",
  options: {
    from: {
      type: "string",
      description: "last-commit (default): run the failed step again; start: plan and run anew",
    },
    watch: { type: "boolean", description: "follow the new run until it ends" },
    ...JSON_OPTION,
  },
  args: ["TASK"],
  async run(ctx, v, [taskId]) {
    const given = v.from === undefined ? "last-commit" : String(v.from);
    const from = FROM[given];
    if (!from) throw usage(`--from must be last-commit or start, not '${given}'`, "retry");
    const branch = await ctx.client.request<Branch>(
      "POST",
      `/v1/tasks/${encodeURIComponent(taskId!)}/retry`,
      { body: { from } },
    );
    if (!v.json) {
      const where = branch.forked_from
        ? `from commit ${branch.forked_from.commit_id}`
        : "from the start";
      ctx.out.line(`task ${taskId} runs again ${where} on branch ${branch.name}, now its result`);
    }
    if (v.watch) return followBranch(ctx, taskId!, branch.name, v.json === true);
    if (v.json) printJson(ctx.out, branch);
    else ctx.out.line(`follow it with \`stackvm watch ${taskId}\``);
    return EXIT.ok;
  },
};

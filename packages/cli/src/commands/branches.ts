/**
 * `stackvm branches TASK` and `stackvm promote TASK BRANCH`: a task's branches
 * (which one is the result, where each was forked, how far each got), and
 * making a fork the task's result.
 */
import type { Branch, Commit, Task } from "@stackvm/core";
import { type Command, JSON_OPTION, printJson } from "../command";
import { EXIT } from "../exit-codes";
import { answerText, fit, preview } from "../render";

const id = encodeURIComponent;

/** Where the head is: `[3] step`, `plan`, or `-` before the first commit. */
function headStep(commit: Commit | null): string {
  if (!commit) return "-";
  return commit.seq_no === null ? commit.type : `[${commit.seq_no}] ${commit.type}`;
}

export const branchesCommand: Command = {
  name: "branches",
  summary: "List a task's branches: status, head step, where each was forked, which is the result.",
  usage: "stackvm branches TASK [--json]",
  options: { ...JSON_OPTION },
  args: ["TASK"],
  async run(ctx, v, [taskId]) {
    const base = `/v1/tasks/${id(taskId!)}`;
    const [task, { branches }] = await Promise.all([
      ctx.client.request<Task>("GET", base),
      ctx.client.request<{ branches: Branch[] }>("GET", `${base}/branches`),
    ]);
    if (v.json) return printJson(ctx.out, { result: task.branch, branches });
    const heads = await Promise.all(
      branches.map((b) =>
        b.head ? ctx.client.request<Commit>("GET", `${base}/commits/${id(b.head)}`) : null,
      ),
    );
    const rows = branches.map((b, i) => [
      b.name === task.branch ? "*" : " ",
      b.name,
      b.status,
      `${b.head ?? "-"} ${headStep(heads[i] ?? null)}`,
      b.forked_from ? `${b.forked_from.branch} at ${b.forked_from.commit_id}` : "-",
    ]);
    const header = [" ", "BRANCH", "STATUS", "HEAD", "FORKED FROM"];
    const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
    for (const row of [header, ...rows]) {
      const line = row.map((cell, c) => (c < row.length - 1 ? cell.padEnd(widths[c]!) : cell));
      ctx.out.line(fit(line.join("  ").trimEnd(), ctx.out.columns));
    }
    ctx.out.line(
      fit(`* the result (change it: stackvm promote ${task.task_id} BRANCH)`, ctx.out.columns),
    );
    return EXIT.ok;
  },
};

export const promoteCommand: Command = {
  name: "promote",
  summary: "Make a branch the task's result: its status and final answer become the task's.",
  usage: "stackvm promote TASK BRANCH [--json]",
  options: { ...JSON_OPTION },
  args: ["TASK", "BRANCH"],
  async run(ctx, v, [taskId, branch]) {
    const task = await ctx.client.request<Task>(
      "POST",
      `/v1/tasks/${id(taskId!)}/branches/${id(branch!)}/promote`,
    );
    if (v.json) return printJson(ctx.out, task);
    ctx.out.line(`branch ${task.branch} is now the result of ${task.task_id} (${task.status})`);
    if (task.final_answer !== null) {
      ctx.out.line("");
      ctx.out.line(answerText(task.final_answer));
    } else if (task.error) ctx.out.line(fit(preview(task.error, 500), ctx.out.columns));
    return EXIT.ok;
  },
};

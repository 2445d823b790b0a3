/**
 * Reading and steering tasks: `tasks`, `task`, `cancel`, `log`, `diff`, `fork`.
 */
import type { Branch, Commit, Diff, Task } from "@stackvm/core";
import { type Command, JSON_OPTION, printJson, readJsonFile } from "../command";
import { EXIT, usage } from "../exit-codes";
import { answerText, describeCommit, diffLines, fit, taskSummary } from "../render";
import { waitingText } from "./answer";
import { followBranch } from "./follow-branch";

const STATUSES = ["queued", "running", "waiting", "completed", "failed", "cancelled"];
const id = encodeURIComponent;

function limitOf(value: unknown, command: string, max = 100): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw usage(`--limit must be a whole number from 1 to ${max}`, command);
  }
  return n;
}

export const tasksCommand: Command = {
  name: "tasks",
  summary: "List tasks, newest first.",
  usage: "stackvm tasks [--status STATUS] [--limit N] [--json]",
  options: {
    status: { type: "string", description: STATUSES.join(" | ") },
    limit: { type: "string", description: "how many (1..100, default 20)" },
    ...JSON_OPTION,
  },
  args: [],
  async run(ctx, v) {
    if (v.status !== undefined && !STATUSES.includes(String(v.status))) {
      throw usage(`--status must be one of ${STATUSES.join(", ")}`, "tasks");
    }
    const page = await ctx.client.request<{ tasks: Task[]; next_cursor: string | null }>(
      "GET",
      "/v1/tasks",
      { query: { status: v.status, limit: limitOf(v.limit, "tasks") } },
    );
    if (v.json) return printJson(ctx.out, page);
    if (page.tasks.length === 0) ctx.out.line("no tasks");
    for (const t of page.tasks) {
      const head = `${t.task_id}  ${t.status.padEnd(9)}  ${t.created_at.slice(0, 19)}  `;
      // The server's title: the task's name, goal, or its plan's first llm_generate prompt.
      const title = t.title.replace(/\s+/g, " ");
      ctx.out.line(head + fit(title, ctx.out.columns - head.length));
      // A failed or cancelled task says why on the next line.
      if (t.error) ctx.out.line(fit(`  ↳ ${t.error.replace(/\s+/g, " ")}`, ctx.out.columns));
    }
    return EXIT.ok;
  },
};

export const taskCommand: Command = {
  name: "task",
  summary: "Show a task: status, usage and final answer.",
  usage: "stackvm task TASK [--json]",
  options: { ...JSON_OPTION },
  args: ["TASK"],
  async run(ctx, v, [taskId]) {
    const task = await ctx.client.request<Task>("GET", `/v1/tasks/${id(taskId!)}`);
    if (v.json) return printJson(ctx.out, task);
    for (const line of taskSummary(task)) ctx.out.line(line);
    if (task.status === "waiting") {
      const branch = await ctx.client.request<Branch>(
        "GET",
        `/v1/tasks/${id(task.task_id)}/branches/${id(task.branch)}`,
      );
      const waiting = waitingText(task.task_id, branch);
      if (waiting) ctx.out.line(waiting);
    }
    if (task.final_answer !== null) {
      ctx.out.line("");
      ctx.out.line(answerText(task.final_answer));
    }
    return EXIT.ok;
  },
};

export const cancelCommand: Command = {
  name: "cancel",
  summary: "Cancel a task: every running branch stops at its next step boundary.",
  usage: "stackvm cancel TASK [--json]",
  options: { ...JSON_OPTION },
  args: ["TASK"],
  async run(ctx, v, [taskId]) {
    const task = await ctx.client.request<Task>("POST", `/v1/tasks/${id(taskId!)}/cancel`);
    if (v.json) printJson(ctx.out, task);
    else ctx.out.line(`cancel requested for ${task.task_id} (status ${task.status})`);
    return EXIT.ok;
  },
};

export const logCommand: Command = {
  name: "log",
  summary: "List a branch's commits, newest first, back to the root.",
  usage: "stackvm log TASK [--branch B] [--limit N] [--json]",
  options: {
    branch: { type: "string", description: "the branch (default: the task's result branch)" },
    limit: { type: "string", description: "how many commits at most (default: all)" },
    ...JSON_OPTION,
  },
  args: ["TASK"],
  async run(ctx, v, [taskId]) {
    const max = limitOf(v.limit, "log", 100_000) ?? Number.POSITIVE_INFINITY;
    const branch =
      typeof v.branch === "string"
        ? v.branch
        : (await ctx.client.request<Task>("GET", `/v1/tasks/${id(taskId!)}`)).branch;
    const commits: Commit[] = [];
    let cursor: string | null = null;
    do {
      const page: { commits: Commit[]; next_cursor: string | null } = await ctx.client.request(
        "GET",
        `/v1/tasks/${id(taskId!)}/branches/${id(branch)}/commits`,
        { query: { limit: Math.min(100, max - commits.length), cursor } },
      );
      commits.push(...page.commits);
      cursor = page.next_cursor;
    } while (cursor && commits.length < max);
    if (v.json) return printJson(ctx.out, { branch, commits });
    for (const c of commits) {
      const seq = c.seq_no === null ? "   " : `[${c.seq_no}]`;
      const on = c.branch === branch ? "" : ` (${c.branch})`;
      const head = `${c.commit_id.padEnd(12)} ${c.type.padEnd(11)} ${seq.padStart(4)} `;
      const what = fit(describeCommit(c), ctx.out.columns - head.length - on.length);
      ctx.out.line(
        `${ctx.out.paint("yellow", head.slice(0, 12))}${head.slice(12)}${what}${on && ctx.out.paint("magenta", on)}`,
      );
    }
    return EXIT.ok;
  },
};

export const diffCommand: Command = {
  name: "diff",
  summary: "Show what a commit changed, against its parent or another commit.",
  usage: "stackvm diff TASK COMMIT [--against COMMIT] [--json]",
  options: {
    against: { type: "string", description: "the commit to compare with (default: the parent)" },
    ...JSON_OPTION,
  },
  args: ["TASK", "COMMIT"],
  async run(ctx, v, [taskId, commit]) {
    const diff = await ctx.client.request<Diff>(
      "GET",
      `/v1/tasks/${id(taskId!)}/commits/${id(commit!)}/diff`,
      { query: { against: v.against } },
    );
    if (v.json) return printJson(ctx.out, diff);
    for (const line of diffLines(ctx.out, diff)) ctx.out.line(line);
    return EXIT.ok;
  },
};

export const forkCommand: Command = {
  name: "fork",
  summary: "Fork a new branch at a commit; the steps before it are not run again.",
  usage:
    'stackvm fork TASK COMMIT [--suggestion "..." | --plan FILE] [--name NAME] [--watch] [--json]',
  options: {
    suggestion: { type: "string", description: "the planner rewrites the plan from this commit" },
    plan: { type: "string", description: "a JSON file with the plan to run from this commit" },
    name: { type: "string", description: "the new branch's name ([a-z0-9_-], default fork-…)" },
    watch: {
      type: "boolean",
      description: "follow the new branch until it ends (with --json: print only the branch then)",
    },
    ...JSON_OPTION,
  },
  args: ["TASK", "COMMIT"],
  async run(ctx, v, [taskId, commit]) {
    if (v.suggestion !== undefined && v.plan !== undefined) {
      throw usage("give --suggestion or --plan, not both", "fork");
    }
    const body: Record<string, unknown> = { from_commit: commit };
    if (v.suggestion !== undefined) body.suggestion = v.suggestion;
    if (v.plan !== undefined) body.plan = readJsonFile(String(v.plan), "--plan", "fork");
    if (v.name !== undefined) body.name = v.name;
    const branch = await ctx.client.request<Branch>("POST", `/v1/tasks/${id(taskId!)}/branches`, {
      body,
    });
    if (!v.json) ctx.out.line(`branch ${branch.name} forked from ${commit} (${branch.status})`);
    if (v.watch) return followBranch(ctx, taskId!, branch.name, v.json === true);
    if (v.json) printJson(ctx.out, branch);
    return EXIT.ok;
  },
};

/**
 * `stackvm run` (StackVM's `flask stackvm execute`): starts a task and shows each
 * step live as it commits, then the final answer; `stackvm watch` follows a task
 * that is already running. The step that writes the final answer shows its text
 * as the model writes it (`event: token`), then its commit as any other.
 */
import type { Branch, Task } from "@stackvm/core";
import { type Command, type Context, parseJsonFlag, printJson, readJsonFile } from "../command";
import { EXIT, usage } from "../exit-codes";
import { follow } from "../follow";
import { planningFlag } from "../planning-flag";
import {
  addCommit,
  answerText,
  commitLine,
  plural,
  retryLine,
  slotText,
  type Totals,
  usd,
} from "../render";
import { waitingText } from "./answer";

/** Follows a task to its end, printing commits live; returns the exit code of its status. */
export async function followTask(ctx: Context, taskId: string, json: boolean): Promise<number> {
  const totals: Totals = { tokens: 0, cost: 0, steps: 0 };
  const started = Date.now();
  const { out } = ctx;
  const interrupt = () => {
    out.done();
    process.stderr.write(
      `\nstopped following; the task goes on. Follow it again with \`stackvm watch ${taskId}\`, or stop it with \`stackvm cancel ${taskId}\`.\n`,
    );
    process.exit(130);
  };
  process.once("SIGINT", interrupt);
  if (!json) {
    out.line(out.paint("bold", `task ${taskId}`));
    out.wait("planning…");
  }
  const waits: Promise<void>[] = [];
  // The step whose answer is being written (`{branch}#{parent_id}`), while its text shows,
  // and the text shown so far.
  let writing: string | null = null;
  let written = "";
  try {
    await follow(ctx.client, taskId, {
      token(token) {
        if (json || !token.final_answer || token.purpose !== "llm_generate") return;
        const step = `${token.branch}#${token.parent_id}`;
        if (writing !== step) {
          if (writing !== null) out.line();
          out.done();
          out.write(out.paint("dim", `answer  [${token.seq_no}] `));
          writing = step;
          written = "";
        }
        out.write(token.text);
        written += token.text;
      },
      commit(commit) {
        addCommit(totals, commit);
        if (json) return;
        if (writing !== null) {
          // Live text is best effort (a reconnect, a batch that came late): the
          // commit carries the answer whole, so the line ends with all of it.
          const answer = commit.outputs.final_answer;
          if (
            writing === `${commit.branch}#${commit.parent_id}` &&
            typeof answer === "string" &&
            answer.startsWith(written)
          ) {
            out.write(answer.slice(written.length));
          }
          out.line();
          writing = null;
        }
        out.line(commitLine(out, commit, totals));
        out.wait(
          `running · ${plural(totals.steps, "commit")} · ${plural(totals.tokens, "token")} · ${usd(totals.cost)}`,
        );
      },
      status(task) {
        const slot = slotText(task);
        if (!json && slot) out.wait(slot);
        else if (!json && task.status === "running" && totals.steps === 0) out.wait("planning…");
        else if (!json && task.status === "waiting") waits.push(sayWaiting(ctx, task));
      },
      retrying(retry) {
        if (json) return;
        out.line(retryLine(out, retry));
        out.wait(
          `retrying · ${retry.error.code} · next attempt at ${retry.next_attempt_at.slice(11, 19)}`,
        );
      },
    });
    await Promise.all(waits);
  } finally {
    out.done();
    process.removeListener("SIGINT", interrupt);
  }
  const task = await ctx.client.request<Task>("GET", `/v1/tasks/${encodeURIComponent(taskId)}`);
  if (json) printJson(out, task);
  else printOutcome(ctx, task, Date.now() - started);
  if (task.status === "failed") return EXIT.taskFailed;
  if (task.status === "cancelled") return EXIT.taskCancelled;
  return EXIT.ok;
}

/** A task that waits: says for what (its result branch's question or time) and how to go on. */
async function sayWaiting(ctx: Context, task: Task): Promise<void> {
  const path = `/v1/tasks/${encodeURIComponent(task.task_id)}/branches/${encodeURIComponent(task.branch)}`;
  const branch = await ctx.client.request<Branch>("GET", path).catch(() => null);
  const text = branch && waitingText(task.task_id, branch);
  if (!text) return;
  ctx.out.line(ctx.out.paint("yellow", text));
  ctx.out.wait(branch.waiting?.kind === "input" ? "waiting for an answer…" : "waiting…");
}

function printOutcome(ctx: Context, task: Task, ms: number): void {
  const { out } = ctx;
  const u = task.usage;
  const usage = `${plural(u.steps, "step")} · ${plural(u.input_tokens + u.output_tokens, "token")} · ${usd(u.cost_usd)} · ${(ms / 1000).toFixed(1)} s`;
  const branch = task.branch === "main" ? "" : ` · result branch ${task.branch}`;
  if (task.status === "completed") {
    out.line(out.paint("green", `✓ completed · ${usage}${branch}`));
    out.line();
    out.line(answerText(task.final_answer));
  } else {
    out.line(out.paint("red", `✗ ${task.status} · ${usage}${branch}`));
    if (task.error) out.line(task.error);
  }
}

export const runCommand: Command = {
  name: "run",
  summary: "Start a task from a goal (or a plan) and show each step live until the answer.",
  usage:
    'stackvm run --goal "..." [--response-format \'{"lang":"Japanese"}\'] [--namespace NAME] [--plan FILE [--name NAME]] [--planning up_front|adaptive] [--evaluate] [--json]',
  options: {
    goal: { type: "string", description: "what the task must achieve" },
    "response-format": {
      type: "string",
      description: 'JSON object, e.g. {"lang":"Japanese","format":"table"}',
    },
    namespace: { type: "string", description: "the namespace whose tools it may use" },
    plan: { type: "string", description: "a JSON file with a plan to run as is" },
    name: { type: "string", description: "the task's name, its title in `stackvm tasks`" },
    planning: {
      type: "string",
      value: "mode",
      description:
        "up_front (whole plan first) or adaptive (next steps after each result); default: the namespace's",
    },
    evaluate: { type: "boolean", description: "have the judge check the answer" },
    json: { type: "boolean", description: "print only the final task as JSON" },
  },
  args: [],
  async run(ctx, v) {
    if (!v.goal && !v.plan) throw usage("give --goal, or --plan FILE, or both", "run");
    const body: Record<string, unknown> = {};
    if (v.goal) body.goal = v.goal;
    if (v.plan) body.plan = readJsonFile(String(v.plan), "--plan", "run");
    if (v.name) body.name = v.name;
    if (v["response-format"]) {
      const format = parseJsonFlag(
        String(v["response-format"]),
        "--response-format",
        '{"lang":"Japanese"}',
        "run",
      );
      if (!format || typeof format !== "object" || Array.isArray(format)) {
        throw usage('--response-format must be a JSON object, e.g. \'{"lang":"Japanese"}\'', "run");
      }
      body.response_format = format;
    }
    if (v.namespace) body.namespace = v.namespace;
    if (v.planning !== undefined) body.planning = planningFlag(v.planning, "run");
    if (v.evaluate) body.evaluate = true;
    const created = await ctx.client.request<{ task_id: string }>("POST", "/v1/tasks", { body });
    return followTask(ctx, created.task_id, v.json === true);
  },
};

export const watchCommand: Command = {
  name: "watch",
  summary: "Follow a task's steps live until it ends.",
  usage: "stackvm watch TASK [--json]",
  options: { json: { type: "boolean", description: "print only the final task as JSON" } },
  args: ["TASK"],
  run: (ctx, v, [taskId]) => followTask(ctx, taskId!, v.json === true),
};

/**
 * `stackvm answer TASK`: answers the question a waiting branch asks (`ask_human`).
 * Without `--answer` it shows the question and its schema and reads the answer
 * from standard input (JSON, or plain text when the schema wants a string).
 */
import type { Branch, Task } from "@stackvm/core";
import { type Command, type Context, JSON_OPTION, printJson } from "../command";
import { EXIT, usage } from "../exit-codes";

const id = encodeURIComponent;

/** The answer as JSON; a string schema also takes plain text as it is. */
export function parseAnswer(text: string, schema: Record<string, unknown> | null): unknown {
  try {
    return JSON.parse(text);
  } catch {
    if (schema?.type === "string" || schema === null) return text;
    throw usage(`the answer must be JSON matching ${JSON.stringify(schema)}`, "answer");
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}

/** What a waiting branch waits for, and what to do about it; null when it does not wait. */
export function waitingText(taskId: string, branch: Branch): string | null {
  if (branch.status !== "waiting" || !branch.waiting) return null;
  const on = branch.name === "main" ? "" : ` on branch ${branch.name}`;
  if (branch.waiting.kind === "time") {
    return `waiting${on} until ${branch.waiting.until} (a wait step): it goes on by itself`;
  }
  const flag = branch.name === "main" ? "" : ` --branch ${branch.name}`;
  return `waiting${on} for an answer: ${branch.waiting.question ?? ""} (answer with \`stackvm answer ${taskId}${flag}\`)`;
}

/**
 * The branch to answer when none is named: the result branch, unless another
 * branch (a fork) is the one that asks; more than one asking: name it.
 */
async function askingBranch(ctx: Context, taskId: string): Promise<string> {
  const base = `/v1/tasks/${id(taskId)}`;
  const [task, { branches }] = await Promise.all([
    ctx.client.request<Task>("GET", base),
    ctx.client.request<{ branches: Branch[] }>("GET", `${base}/branches`),
  ]);
  const asking = branches.filter((b) => b.status === "waiting" && b.waiting?.kind === "input");
  if (asking.length === 0 || asking.some((b) => b.name === task.branch)) return task.branch;
  if (asking.length === 1) return asking[0]!.name;
  throw usage(
    `branches ${asking.map((b) => b.name).join(", ")} each wait for an answer: name one with --branch`,
    "answer",
  );
}

export const answerCommand: Command = {
  name: "answer",
  summary: "Answer the question a waiting task asks (ask_human).",
  usage: "stackvm answer TASK [--branch B] [--answer JSON] [--json]",
  options: {
    branch: {
      type: "string",
      description: "the branch (default: the one that asks, the result branch first)",
    },
    answer: {
      type: "string",
      description: 'the answer as JSON (true, 42, "text"); without it, read from stdin',
    },
    ...JSON_OPTION,
  },
  args: ["TASK"],
  async run(ctx, v, [taskId]) {
    const branchName = v.branch === undefined ? await askingBranch(ctx, taskId!) : String(v.branch);
    const path = `/v1/tasks/${id(taskId!)}/branches/${id(branchName)}`;
    const branch = await ctx.client.request<Branch>("GET", path);
    if (branch.status === "waiting" && branch.waiting?.kind === "time") {
      throw usage(
        `branch ${branchName} asks nothing: it waits until ${branch.waiting.until} (a wait step) and goes on by itself`,
        "answer",
      );
    }
    if (branch.status !== "waiting" || branch.waiting?.kind !== "input") {
      throw usage(`branch ${branchName} is ${branch.status}, not waiting for an answer`, "answer");
    }
    const schema = branch.waiting.schema;
    let text = v.answer === undefined ? undefined : String(v.answer);
    if (text === undefined) {
      ctx.err.line(
        `${branch.waiting.question}\n(answer as JSON matching ${JSON.stringify(schema)})`,
      );
      text = await readStdin();
    }
    const answered = await ctx.client.request<Branch>("POST", `${path}/input`, {
      body: { answer: parseAnswer(text, schema), source: "cli" },
    });
    if (v.json) printJson(ctx.out, answered);
    else ctx.out.line(`answered: branch ${answered.name} is ${answered.status}`);
    return EXIT.ok;
  },
};

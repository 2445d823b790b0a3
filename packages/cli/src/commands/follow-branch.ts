/**
 * `stackvm fork --watch`: follows one branch, not the task. The task's events
 * carry every branch's commits; only the fork's own are shown (the history it
 * shares with its parent was shown when that ran), and following stops when
 * the fork ends, with the fork's answer, whatever the other branches do.
 */
import type { Branch, Task } from "@stackvm/core";
import { type Context, printJson } from "../command";
import { EXIT } from "../exit-codes";
import { follow } from "../follow";
import {
  addCommit,
  answerText,
  commitLine,
  count,
  plural,
  retryLine,
  type Totals,
  usd,
} from "../render";
import { waitingText } from "./answer";

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** Follows branch `name` of a task to its end; returns the exit code of its status. */
export async function followBranch(
  ctx: Context,
  taskId: string,
  name: string,
  json: boolean,
): Promise<number> {
  const { out, client } = ctx;
  const path = `/v1/tasks/${encodeURIComponent(taskId)}/branches/${encodeURIComponent(name)}`;
  const totals: Totals = { tokens: 0, cost: 0, steps: 0 };
  const started = Date.now();
  const stop = new AbortController();
  const said = new Set<string>();
  const seen = new Set<string>();
  // The head of the ended branch: following stops once its commit is printed.
  let lastHead: string | null = null;
  const stopAt = (head: string | null, forkedAt: string | undefined) => {
    lastHead = head;
    if (head === null || head === forkedAt || seen.has(head)) stop.abort();
  };
  // After each of the fork's commits: has it ended, or does it wait for an answer?
  // A branch read may already be ended while later commits are still on their way
  // in the stream, so it stops at the ended head's commit, not at the read.
  const look = async () => {
    const branch = await client.request<Branch>("GET", path);
    if (TERMINAL.has(branch.status)) stopAt(branch.head, branch.forked_from?.commit_id);
    const waiting = waitingText(taskId, branch);
    if (!json && waiting && !said.has(waiting)) {
      said.add(waiting);
      out.line(out.paint("yellow", waiting));
    }
  };
  const looks: Promise<void>[] = [];
  if (!json) out.wait("running…");
  try {
    await follow(
      client,
      taskId,
      {
        commit(commit) {
          if (commit.branch !== name || seen.has(commit.commit_id)) return;
          seen.add(commit.commit_id);
          addCommit(totals, commit);
          looks.push(look().catch(() => undefined));
          if (!json) out.line(commitLine(out, commit, totals));
          if (commit.commit_id === lastHead) stop.abort();
          if (json) return;
          out.wait(
            `running · ${plural(totals.steps, "commit")} · ${plural(totals.tokens, "token")} · ${usd(totals.cost)}`,
          );
        },
        status() {},
        retrying(retry) {
          if (json || retry.branch !== name) return;
          out.line(retryLine(out, retry));
          out.wait(`retrying · next attempt at ${retry.next_attempt_at.slice(11, 19)}`);
        },
      },
      { signal: stop.signal },
    );
    await Promise.all(looks);
  } finally {
    out.done();
  }
  const [branch, task] = await Promise.all([
    client.request<Branch>("GET", path),
    client.request<Task>("GET", `/v1/tasks/${encodeURIComponent(taskId)}`),
  ]);
  if (json) printJson(out, branch);
  else {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const usage = `${plural(totals.steps, "commit")} · ${count(totals.tokens)} tok · ${usd(totals.cost)} · ${seconds} s`;
    const done = branch.status === "completed";
    out.line(
      out.paint(done ? "green" : "red", `${done ? "✓" : "✗"} ${name} ${branch.status} · ${usage}`),
    );
    if (task.branch !== name) {
      out.line(
        `the task's result is still branch ${task.branch}: make this one the result with \`stackvm promote ${taskId} ${name}\``,
      );
    }
    out.line();
    out.line(done ? answerText(branch.final_answer) : (branch.error ?? ""));
  }
  if (branch.status === "failed") return EXIT.taskFailed;
  if (branch.status === "cancelled") return EXIT.taskCancelled;
  return EXIT.ok;
}

/**
 * `stackvm continue` as a process against the local stack: a follow-up goal
 * continues a completed task as the next turn, `--watch` follows it to its
 * answer (which reads the first turn's variable), and a task still at work or
 * a missing `--goal` is refused with what to do.
 */
import { describe, expect, it } from "vitest";
import { askFirst } from "../support/plans";
import { useTestStack } from "../support/stack";
import { runCli } from "./run-cli";

const t = useTestStack();

const cli = (args: string[]) => runCli(args, { STACKVM_URL: t.url, STACKVM_API_KEY: t.apiKey });

describe("stackvm continue", () => {
  it("starts the next turn, follows it to an answer that reads the first turn's variable", async () => {
    const first = await t.api("POST", "/v1/tasks", {
      plan: [
        { seq_no: 0, type: "assign", parameters: { n: 21 } },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${n}" } },
      ],
    });
    await t.waitForTask(first.body.task_id);
    t.llm.on("plan", {
      reasoning: "double the earlier n",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "${n} * 2" } }],
    });
    const run = await cli(["continue", first.body.task_id, "--goal", "Double it.", "--watch"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`continues ${first.body.task_id} \\(thread ${first.body.task_id}\\)`),
    );
    expect(run.stdout.trim().split("\n").at(-1)).toBe("42");
  });

  it("refuses a missing --goal (usage) and a task still at work (request refused)", async () => {
    const missing = await cli(["continue", "tsk_x"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--goal is required/);

    t.llm.on("plan", {
      reasoning: "ask first",
      plan: askFirst("Which?"),
    });
    const waiting = (await t.api("POST", "/v1/tasks", { goal: "Ask me." })).body.task_id;
    for (let i = 0; i < 400; i++) {
      if ((await t.api("GET", `/v1/tasks/${waiting}`)).body.status === "waiting") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const early = await cli(["continue", waiting, "--goal", "Go on."]);
    expect(early.code).toBe(6);
    expect(early.stderr).toMatch(/task_not_finished|wait until it completes/);
  });
});

/**
 * The CLI as a process when things go wrong: `run` prints each failed attempt
 * that will be tried again (error, attempt, next attempt), and `stackvm retry`
 * runs a failed task again from its last commit or from the start; `stackvm
 * task` says when a task waits for a running slot.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, useTestStack } from "../support/stack";
import { runCli } from "./run-cli";

const t = useTestStack({
  env: { STACKVM_LLM_UNREACHABLE_SECONDS: "2", LLM_TIMEOUT_MS: "1500", LLM_MAX_ATTEMPTS: "1" },
});

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { STACKVM_URL: t.url, STACKVM_API_KEY: t.apiKey, ...env });

const PLAN = [
  {
    seq_no: 0,
    type: "calling",
    parameters: { tool_name: "llm_generate", tool_params: { prompt: "Hi?" }, output_vars: ["hi"] },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${hi}" } },
];

describe("stackvm run when a step fails and is retried", () => {
  it("prints the failed attempt, its error and when the next one comes, then goes on", async () => {
    t.llm.on("plan", { reasoning: "r", plan: PLAN });
    t.llm.queue("text", { fault: "500", message: "scripted outage" }, "hello");
    const run = await cli(["run", "--goal", "Say hello."]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const retry = run.stdout.split("\n").find((line) => line.startsWith("retrying"));
    expect(retry, run.stdout).toMatch(
      /^retrying +attempt 1 of 5 failed, next in \d+ s \(\d\d:\d\d:\d\d\): \[llm_unavailable\]/,
    );
    expect(run.stdout.trim().split("\n").at(-1)).toBe("hello");
  });
});

describe("stackvm retry", () => {
  it("runs a task that failed at a step again from its last commit, and refuses a bad --from", async () => {
    t.llm.on("text", { fault: "hang", ms: 5_000 });
    const created = await t.api("POST", "/v1/tasks", { plan: PLAN });
    const taskId = created.body.task_id as string;
    const failed = await t.waitForTask(taskId);
    expect(failed.error).toContain("could not be reached");
    t.llm.reset();
    t.llm.on("text", "back again");

    // The list says why a task failed, on the line under it.
    const listed = await cli(["tasks"]);
    const row = listed.stdout.split("\n").findIndex((line) => line.startsWith(taskId));
    // A task started from a plan is listed by its title: the plan's first llm_generate prompt.
    expect(listed.stdout.split("\n")[row]).toMatch(/ Hi\?$/);
    expect(listed.stdout.split("\n")[row + 1]).toMatch(
      /^ {2}↳ step 0 failed: \[llm_unreachable\] the LLM could not be reached/,
    );

    const bad = await cli(["retry", taskId, "--from", "sideways"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--from must be last-commit or start");

    const again = await cli(["retry", taskId, "--watch"]);
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    const lines = again.stdout.trim().split("\n");
    expect(lines[0]).toMatch(
      new RegExp(`^task ${taskId} runs again from commit \\S+ on branch retry-`),
    );
    expect(again.stdout).toMatch(/^\(retry-\w+\) step\s+\[0\] calling llm_generate → hi = "/m);
    expect(lines.at(-1)).toBe("back again");
    const task = await t.api("GET", `/v1/tasks/${taskId}`);
    expect(task.body).toMatchObject({ status: "completed", final_answer: "back again" });

    const twice = await cli(["retry", taskId, "--from", "start", "--json"]);
    expect(twice.code).toBe(0);
    expect(JSON.parse(twice.stdout)).toMatchObject({ forked_from: null, status: "running" });
    expect((await t.waitForTask(taskId)).status).toBe("completed");
  });
});

describe("stackvm task for a task queued for a running slot", () => {
  it("says it waits for a slot, with its place in line", async () => {
    const held: ServerResponse[] = [];
    const hold = createServer((_req, res) => held.push(res));
    await new Promise<void>((resolve) => hold.listen(0, "127.0.0.1", resolve));
    try {
      const admin = { key: ADMIN_KEY };
      const made = await t.api("POST", "/v1/admin/tenants/narrow/keys", { name: "ci" }, admin);
      const key = made.body.key as string;
      await t.api("PUT", "/v1/admin/tenants/narrow/quotas", { max_running_tasks: 1 }, admin);
      const ns = { allowed_tools: ["http_request"], allowed_hosts: ["127.0.0.1"] };
      await t.api("PUT", "/v1/namespaces/held", ns, { key });
      const url = `http://127.0.0.1:${(hold.address() as AddressInfo).port}/slow`;
      const call = { tool_name: "http_request", tool_params: { url }, output_vars: ["r"] };
      const body = {
        namespace: "held",
        plan: [
          { seq_no: 0, type: "calling", parameters: call },
          { seq_no: 1, type: "assign", parameters: { final_answer: "done" } },
        ],
      };
      const first = (await t.api("POST", "/v1/tasks", body, { key })).body.task_id;
      const second = (await t.api("POST", "/v1/tasks", body, { key })).body.task_id;
      const shown = await cli(["task", second], { STACKVM_API_KEY: key });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(
        /^queued {3}waiting for a running slot: number 1 in line \(at most 1 task run at once, all taken\)$/m,
      );
      for (const id of [second, first]) {
        await t.api("POST", `/v1/tasks/${id}/cancel`, undefined, { key });
      }
    } finally {
      for (const res of held) res.end("{}");
      await new Promise<void>((resolve) => hold.close(() => resolve()));
    }
  });
});

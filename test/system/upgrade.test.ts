/**
 * A data folder written by the release before variables left the branch item
 * (issue 22; made by `test/fixtures/make-data-v1.ts`) opens with today's code,
 * and its tasks run on: a task stopped at `ask_human` after nine steps (its
 * variables inline on the branch item, one of 70 KB in the blob store) is
 * answered and completes from its old variables; a completed task's state,
 * diff and a fork of an old commit read and run as before.
 */
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { consoleLog, type LocalStack, startLocalStack } from "@stackvm/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScriptedLlm, startScriptedLlm } from "../support/llm-server";

const fixture = resolve(import.meta.dirname, "../fixtures/data-v1");
let dir: string;
let stack: LocalStack;
let llm: ScriptedLlm;
let ids: { api_key: string; waiting: string; completed: string };

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ids.api_key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = await response.json();
  if (!response.ok)
    throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

async function until(taskId: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const task = await api("GET", `/v1/tasks/${taskId}`);
    if (["completed", "failed", "cancelled"].includes(task.status)) return task;
    if (Date.now() > deadline)
      throw new Error(`task ${taskId} did not end: ${JSON.stringify(task)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  // A copy: the test must not change the committed folder.
  dir = await mkdtemp(join(tmpdir(), "stackvm-upgrade-"));
  await cp(fixture, dir, { recursive: true });
  ids = JSON.parse(await readFile(join(fixture, "fixture.json"), "utf8"));
  llm = await startScriptedLlm();
  stack = await startLocalStack({
    dataDir: dir,
    port: 0,
    log: consoleLog({ level: "silent" }),
    bootstrapApiKey: ids.api_key,
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k", LLM_MODEL: "scripted-model" },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await llm?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a data folder from before issue 22", () => {
  it("answers the waiting task, which completes from the variables its branch item held", async () => {
    const branch = await api("GET", `/v1/tasks/${ids.waiting}/branches/main`);
    expect(branch.status).toBe("waiting");
    expect(branch.state.variables.v0).toBe("value 0");
    expect(branch.state.variables.v3).toMatchObject({ $ref: "s3", size: 70 * 1024 + 2 });
    await api("POST", `/v1/tasks/${ids.waiting}/branches/main/input`, { answer: "yes" });
    const done = await until(ids.waiting);
    expect(done).toMatchObject({
      status: "completed",
      final_answer: "yes value 0 changed after the upgrade value 8",
    });
    // The new steps wrote the new layout over the old: the state at the head has both.
    const head = await api("GET", `/v1/tasks/${ids.waiting}/branches/main`);
    expect(head.state.variables).toMatchObject({
      v0: "value 0",
      v1: "changed after the upgrade",
      v8: "value 8",
      answer: "yes",
    });
    const { commits } = await api("GET", `/v1/tasks/${ids.waiting}/branches/main/commits`);
    const at = (depth: number) => commits.find((c: any) => c.commit_id.endsWith(`-${depth}`));
    // Depth 12 (the last step) has a window over the old depths 9 to 12.
    const state = await api("GET", `/v1/tasks/${ids.waiting}/commits/${at(12).commit_id}/state`);
    expect(Object.keys(state.variables).sort()).toEqual(
      ["answer", "final_answer", ...Array.from({ length: 9 }, (_, i) => `v${i}`)].sort(),
    );
    expect(state.variables.v1).toBe("changed after the upgrade");
  });

  it("reads the completed task's state and diff at old commits, and forks one that runs on", async () => {
    const { commits } = await api("GET", `/v1/tasks/${ids.completed}/branches/main/commits`);
    const six = commits.find((c: any) => c.commit_id.endsWith("-6"));
    const state = await api("GET", `/v1/tasks/${ids.completed}/commits/${six.commit_id}/state`);
    expect(state.variables).toMatchObject({ v0: "value 0", v5: "value 5" });
    expect(state.variables.v6).toBeUndefined();
    const diff = await api("GET", `/v1/tasks/${ids.completed}/commits/${six.commit_id}/diff`);
    expect(diff.added).toEqual({ v5: "value 5" });
    const fork = await api("POST", `/v1/tasks/${ids.completed}/branches`, {
      from_commit: six.commit_id,
      name: "again",
    });
    expect(fork.name).toBe("again");
    for (let i = 0; i < 600; i++) {
      const b = await api("GET", `/v1/tasks/${ids.completed}/branches/again`);
      if (b.status === "completed") {
        expect(b.final_answer).toBe("value 11");
        expect(b.state.variables).toMatchObject({ v0: "value 0", v4: "value 4", v11: "value 11" });
        expect(b.state.variables.v3).toMatchObject({ $ref: "s3" });
        return;
      }
      expect(b.status).not.toBe("failed");
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("the fork did not complete");
  });
});

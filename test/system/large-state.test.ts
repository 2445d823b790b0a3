/**
 * State without a ceiling (issue 22), through the whole local stack: plans whose
 * `run_code` steps each return a 50 KB string (the size of a retrieval answer or
 * a long draft). Before, the branch item carried every value, and the ninth such
 * step was refused by the store and retried until the dead-letter queue. Now a
 * value lives on the commit that set it, and the branch item only names where.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ visibilityTimeoutSeconds: 30 });
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

const SIZE = 50 * 1024;

/** Step i's 50 KB string: its own letter, then its number. */
const draft = (i: number) => `${String.fromCharCode(97 + (i % 26)).repeat(SIZE - 3)}${i % 10}!!`;

/**
 * `steps` steps, step i setting `v{i}` to a 50 KB string, then the answer: by
 * `run_code` (the sandbox's JavaScript), or by `llm_generate` (the scripted LLM
 * answers the prompt's number with that step's string), which is quicker.
 */
function plan(steps: number, tool: "run_code" | "llm_generate"): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < steps; i++) {
    const letter = String.fromCharCode(97 + (i % 26));
    out.push({
      seq_no: i,
      type: "calling",
      parameters:
        tool === "run_code"
          ? {
              tool_name: "run_code",
              tool_params: {
                language: "javascript",
                code: `"${letter}".repeat(${SIZE - 3}) + ${i % 10} + "!!"`,
              },
              output_vars: [`v${i}`],
            }
          : {
              tool_name: "llm_generate",
              tool_params: { prompt: `Draft number ${i}` },
              output_vars: [`v${i}`],
            },
    });
  }
  out.push({ seq_no: steps, type: "assign", parameters: { final_answer: "done" } });
  return out;
}

async function runPlan(steps: number, tool: "run_code" | "llm_generate") {
  const created = await t.api("POST", "/v1/tasks", { plan: plan(steps, tool) });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const taskId = created.body.task_id as string;
  const task = await t.waitForTask(taskId, { timeoutMs: 300_000 });
  return { taskId, task };
}

/** The branch item as the store holds it, in bytes of JSON. */
async function branchItemBytes(taskId: string): Promise<number> {
  const branch = await t.stack.system.store.getBranch("local", taskId, "main");
  const { plan: _plan, ...item } = branch!;
  return JSON.stringify(item).length;
}

describe("a branch holding megabytes of variables", () => {
  it("runs twelve run_code steps of 50 KB each to completion, the state showing every value", async () => {
    const { taskId, task } = await runPlan(12, "run_code");
    expect(task.error).toBeNull();
    expect(task.status).toBe("completed");
    const branch = await t.api("GET", `/v1/tasks/${taskId}/branches/main`);
    const variables = branch.body.state.variables as Record<string, string>;
    for (let i = 0; i < 12; i++) {
      expect(variables[`v${i}`] === draft(i), `v${i}`).toBe(true);
    }
    // The branch item names where the values live: under 2 KB, not 600 KB.
    expect(await branchItemBytes(taskId)).toBeLessThan(2048);
  }, 300_000);

  it("runs 100 steps of 50 KB each (5 MB of state) to completion", async () => {
    t.llm.on("text", (r) =>
      draft(Number(/Draft number (\d+)/.exec(JSON.stringify(r.messages))![1])),
    );
    const { taskId, task } = await runPlan(100, "llm_generate");
    expect(task.error).toBeNull();
    expect(task.status).toBe("completed");
    const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=5`);
    // Depth 50 is the step of seq_no 49 (the plan commit is depth 0).
    const at50 = `${body.commits[0].commit_id.split("-")[0]}-50`;
    const state = await t.api("GET", `/v1/tasks/${taskId}/commits/${at50}/state`);
    expect(Object.keys(state.body.variables)).toHaveLength(50);
    expect(state.body.variables.v49 === draft(49)).toBe(true);
    const diff = await t.api("GET", `/v1/tasks/${taskId}/commits/${at50}/diff`);
    expect(Object.keys(diff.body.added)).toEqual(["v49"]);
    expect(await branchItemBytes(taskId)).toBeLessThan(4096);
  }, 600_000);
});

/**
 * Generated code through the whole stack: the real API, worker and store, the
 * scripted LLM server, and the local sandbox process (the same handler as the
 * sandbox Lambda) running QuickJS and Pyodide.
 */
import { LocalSandbox } from "@stackvm/local";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let sandbox: LocalSandbox;

beforeAll(async () => {
  sandbox = new LocalSandbox({ ceiling: { time_ms: 3_000 }, log: () => {} });
  // Start the sandbox process and its Python snapshot before the first step needs them.
  await sandbox.run({ v: 1, language: "python", code: "1" });
  t = await startTestStack({
    sandbox,
    // A code_task step takes several sandbox runs: longer than the harness's default
    // visibility timeout, after which SQS would hand the same step out again.
    visibilityTimeoutSeconds: 60,
    // No plan updates: a failed step fails the branch with its error, which is what these tests read.
    env: { STACKVM_MAX_PLAN_UPDATES: "0" },
  });
});

afterAll(async () => {
  await t.stop();
  await sandbox.close();
});

beforeEach(() => {
  t.llm.reset();
});

async function run(plan: unknown[]) {
  const created = await t.api("POST", "/v1/tasks", { plan });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return t.waitForTask(created.body.task_id, { timeoutMs: 90_000 });
}

async function commitsOf(taskId: string) {
  const res = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=100`);
  return (res.body.commits as Array<Record<string, any>>).reverse();
}

const codeTask = (extra: Record<string, unknown> = {}) => ({
  seq_no: 0,
  type: "calling",
  parameters: {
    tool_name: "code_task",
    tool_params: {
      task: "The average of the numbers",
      language: "python",
      inputs: { numbers: [1, 2, 3, 6] },
      ...extra,
    },
    output_vars: ["average"],
  },
});
const finish = (seq: number, value: string) => ({
  seq_no: seq,
  type: "assign",
  parameters: { final_answer: value },
});
const code = (text: string) => ({ done: false, code: text, explanation: "computes it" });
const accept = { done: true, code: "", explanation: "the average of the numbers" };

describe("code_task through the whole stack", () => {
  it("runs the model's fix after its first code fails, and commits both attempts", async () => {
    t.llm.queue(
      "code",
      code("sum(numbers) / len(number)"),
      code("sum(numbers) / len(numbers)"),
      accept,
    );

    const task = await run([codeTask(), finish(1, "${average.result}")]);

    expect(task).toMatchObject({ status: "completed", final_answer: 3 });
    const step = (await commitsOf(task.task_id)).find((c) => c.seq_no === 0)!;
    const attempts = step.details.code_task.attempts;
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({
      code: "sum(numbers) / len(number)",
      error: { code: "runtime_error" },
    });
    expect(attempts[0].error.message).toContain("NameError");
    expect(attempts[1]).toMatchObject({
      code: "sum(numbers) / len(numbers)",
      error: null,
      result: 3,
    });
    expect(attempts[1].sandbox.code.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(step.outputs.average).toMatchObject({
      result: 3,
      code: "sum(numbers) / len(numbers)",
      attempts: 2,
    });
    expect(step.llm_calls.map((c: { purpose: string }) => c.purpose)).toEqual([
      "code",
      "code",
      "code",
    ]);
    expect(t.llm.requests.map((r) => r.schemaName)).toEqual(["code", "code", "code"]);
  });

  it("stops after the bounded rounds with the last error", async () => {
    t.llm.queue("code", code("1 / 0"), code("undefined_name"));

    const task = await run([codeTask({ max_fix_rounds: 1 }), finish(1, "${average.result}")]);

    expect(task.status).toBe("failed");
    expect(task.error).toMatch(/no working python code after 2 attempts/);
    expect(task.error).toMatch(/NameError/);
    expect(t.llm.requests.filter((r) => r.schemaName === "code")).toHaveLength(2);
  });

  it("saves the final code as a code tool that a later plan calls", async () => {
    t.llm.queue("code", code("result = sum(numbers) / len(numbers)"), accept);
    const first = await run([codeTask(), finish(1, "${average.code}")]);
    expect(first.status).toBe("completed");

    const saved = await t.api("POST", "/v1/namespaces/default/tools", {
      name: "average",
      description: "The average of a list of numbers",
      input_schema: {
        type: "object",
        properties: { numbers: { type: "array", items: { type: "number" } } },
        required: ["numbers"],
      },
      language: "python",
      code: first.final_answer,
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);

    const second = await run([
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "average",
          tool_params: { numbers: [10, 20] },
          output_vars: ["avg"],
        },
      },
      finish(1, "${avg}"),
    ]);
    expect(second).toMatchObject({ status: "completed", final_answer: 15 });
    expect(t.llm.requests.filter((r) => r.schemaName === "code")).toHaveLength(2);
  });
});

describe("run_code through the whole stack", () => {
  it("fails the step of an endless loop at the time limit, and the next task runs", async () => {
    const loop = await run([
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "run_code",
          tool_params: { language: "javascript", code: "while (true) {}" },
          output_vars: ["out"],
        },
      },
      finish(1, "${out}"),
    ]);
    expect(loop.status).toBe("failed");
    expect(loop.error).toMatch(/time limit of 3000 ms/);

    const next = await run([
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "run_code",
          tool_params: { language: "python", code: "print('hi')\n6 * 7" },
          output_vars: ["out"],
        },
      },
      finish(1, "${out}"),
    ]);
    expect(next).toMatchObject({ status: "completed", final_answer: 42 });
    const step = (await commitsOf(next.task_id)).find((c) => c.seq_no === 0)!;
    // The variable holds the result; what the code printed is in the commit.
    expect(step.outputs.out).toBe(42);
    expect(step.details.stdout_tail).toBe("hi\n");
    expect(step.details.sandbox.stdout.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

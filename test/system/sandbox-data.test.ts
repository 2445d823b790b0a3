/**
 * Data analysis through the whole stack: a task's `run_code` and `code_task`
 * steps, the worker, the local sandbox process and its data engine (the
 * system's CPython with numpy, pandas, matplotlib and openpyxl, behind
 * bubblewrap), with the chart the code saves stored as a file of the step.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, finish } from "../support/plans";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({
    // The sandbox boots a Pyodide child and a data engine child at start, as npm start does.
    warmPython: true,
    visibilityTimeoutSeconds: 60,
    env: { STACKVM_MAX_PLAN_UPDATES: "0" },
  });
});

afterAll(async () => {
  await t?.stop();
});

beforeEach(() => {
  t.llm.reset();
});

async function run(plan: unknown[]) {
  const created = await t.api("POST", "/v1/tasks", { plan });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return t.waitForTask(created.body.task_id, { timeoutMs: 120_000 });
}

/** A `run_code` step in Python with `params` (output in `out`), then the final answer `answer`. */
const pythonThen = (params: object, answer: string) => [
  call(0, "run_code", { language: "python", ...params }, ["out"]),
  finish(1, answer),
];

async function stepOf(taskId: string, seq: number) {
  const res = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=100`);
  return (res.body.commits as Array<Record<string, any>>).find((c) => c.seq_no === seq)!;
}

const ANALYSIS = [
  "import pandas as pd",
  "import matplotlib.pyplot as plt",
  "df = pd.read_csv('sales.csv')",
  "means = df.groupby('region')['amount'].mean().round(2)",
  "means.plot(kind='bar', title='Mean amount per region')",
  "plt.savefig('chart.png')",
  "{'rows': len(df), 'mean_per_region': means.to_dict()}",
].join("\n");

describe("data analysis with pandas and matplotlib through the whole stack", () => {
  it("reads a 50,000-row CSV with pandas, groups it, and stores the matplotlib chart as a file of the step", {
    timeout: 150_000,
  }, async () => {
    // As short as a row can be: a plan is at most 256 KiB as JSON.
    const regions = ["a", "b", "c", "d"];
    const csv = [
      "region,amount",
      ...Array.from({ length: 50_000 }, (_, i) => `${regions[i % 4]},${i % 10}`),
    ].join("\n");
    const task = await run(
      pythonThen(
        {
          code: ANALYSIS,
          files: [{ path: "sales.csv", encoding: "utf8", content: csv }],
          output: "all",
        },
        "${out.result}",
      ),
    );
    expect(task.status, task.error).toBe("completed");
    // Region r has rows 4k + r, with amount (4k + r) mod 10: the same means, computed here.
    const expected = Object.fromEntries(
      regions.map((region, r) => {
        const amounts = Array.from({ length: 12_500 }, (_, k) => (4 * k + r) % 10);
        const mean = amounts.reduce((a, b) => a + b, 0) / amounts.length;
        return [region, Math.round(mean * 100) / 100];
      }),
    );
    expect(task.final_answer).toEqual({ rows: 50_000, mean_per_region: expected });

    const step = await stepOf(task.task_id, 0);
    const files = step.details.sandbox.files as Array<{
      path: string;
      size: number;
      sha256: string;
    }>;
    expect(files.map((file) => file.path)).toEqual(["chart.png"]);
    const chart = files[0]!;
    // The chart downloads as the PNG the code drew.
    const got = await fetch(
      `${t.url}/v1/tasks/${task.task_id}/blobs/${chart.sha256}?type=image/png`,
      { headers: { authorization: `Bearer ${t.apiKey}` } },
    );
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("image/png");
    const bytes = new Uint8Array(await got.arrayBuffer());
    expect([...bytes.slice(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(bytes.byteLength).toBe(chart.size);
  });

  it("runs code_task's pandas on its first try, told by the prompt that pandas is there", {
    timeout: 150_000,
  }, async () => {
    const pandas =
      "import pandas as pd\ndf = pd.DataFrame(rows)\nresult = df.groupby('a')['b'].mean().to_dict()";
    t.llm.queue(
      "code",
      { done: false, code: pandas, explanation: "groups by a with pandas" },
      { done: true, code: "", explanation: "the mean of b for each a" },
    );
    const task = await run([
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "code_task",
          tool_params: {
            task: "the mean of column b per value of column a",
            language: "python",
            inputs: {
              rows: [
                { a: "x", b: 1 },
                { a: "x", b: 3 },
                { a: "y", b: 10 },
              ],
            },
          },
          output_vars: ["means"],
        },
      },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${means.result}" } },
    ]);
    expect(task).toMatchObject({ status: "completed", final_answer: { x: 2, y: 10 } });
    const step = await stepOf(task.task_id, 0);
    expect(step.details.code_task.attempts).toHaveLength(1);
    expect(step.details.code_task.attempts[0]).toMatchObject({ code: pandas, error: null });
    const system = t.llm.requests[0]?.messages.find((m) => m.role === "system")?.content ?? "";
    expect(system).toMatch(/pandas 1\.5/);
    expect(system).toMatch(/plt\.savefig\('chart\.png'\)/);
    expect(system).not.toMatch(/no numpy, pandas/);
  });

  it("fails a pandas step over its memory limit with the memory error, and the next pandas task runs", async () => {
    const big = await run(
      pythonThen({ code: "import numpy\nnumpy.ones(1 << 31, dtype='uint8').sum()" }, "${out}"),
    );
    expect(big.status).toBe("failed");
    expect(big.error).toMatch(/memory limit of 256 MiB/);
    const next = await run(
      pythonThen({ code: "import pandas as pd\nint(pd.Series([1, 2, 3]).sum())" }, "${out}"),
    );
    expect(next).toMatchObject({ status: "completed", final_answer: 6 });
  });
});

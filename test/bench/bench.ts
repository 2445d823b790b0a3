/**
 * `npm run bench`: the step path on the local stack, measured. Not a test: it
 * prints numbers and writes them to `.stackvm/bench.json` (read by
 * `scripts/cost.ts`). Counts of DynamoDB reads and writes and the bytes written
 * come from middleware on the SDK clients, over a window in the middle of a run
 * (so task creation, the first and the last step are not in them); the bench
 * watches progress with a separate, unmetered client.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { createAwsClients, type Meterable, type MeterSnapshot, meter } from "@stackvm/aws";
import { branchKey } from "@stackvm/core";
import { startTestStack } from "../support/stack";

const READS = ["GetItem", "BatchGetItem", "Query"];
const WRITES = ["PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem"];
const sum = (s: MeterSnapshot, names: string[], field: "calls" | "requestBytes") =>
  names.reduce((n, name) => n + (s[field][name] ?? 0), 0);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A plan of `steps` assigns, each setting one variable `s{i}`, then the answer. */
function chainPlan(steps: number, llmEvery = 0): unknown[] {
  const plan: unknown[] = [];
  for (let i = 0; i < steps; i++) {
    plan.push(
      llmEvery > 0 && i % llmEvery === 0
        ? {
            seq_no: i,
            type: "calling",
            parameters: {
              tool_name: "llm_generate",
              tool_params: { prompt: `Say ${i}` },
              output_vars: [`s${i}`],
            },
          }
        : { seq_no: i, type: "assign", parameters: { [`s${i}`]: `${i} + 1` } },
    );
  }
  plan.push({ seq_no: steps, type: "assign", parameters: { final_answer: "done" } });
  return plan;
}

async function main() {
  const t = await startTestStack({ concurrency: 8 });
  t.llm.on("text", () => "ok");
  const probe = createAwsClients({
    region: "us-east-1",
    endpoints: t.stack.endpoints,
    credentials: { accessKeyId: "bench", secretAccessKey: "bench" },
  });
  // The SDK's middleware types are wider than the meter needs.
  const dynamo = meter(t.stack.clients.dynamodb as unknown as Meterable);
  const sqs = meter(t.stack.clients.sqs as unknown as Meterable);
  const s3 = meter(t.stack.clients.s3 as unknown as Meterable);
  const depthOf = async (taskId: string) => {
    const out = await probe.doc.send(
      new GetCommand({ TableName: "stackvm", Key: branchKey("local", taskId, "main") }),
    );
    return (out.Item?.depth as number | undefined) ?? -1;
  };

  /** Runs one task and meters steps [from, to) of it. */
  async function window(body: Record<string, unknown>, from: number, to: number) {
    const created = await t.api("POST", "/v1/tasks", body);
    if (created.status !== 202) throw new Error(JSON.stringify(created.body));
    const taskId = created.body.task_id as string;
    let d0 = -1;
    for (;;) {
      const d = await depthOf(taskId);
      if (d0 < 0 && d >= from) {
        for (const m of [dynamo, sqs, s3]) m.reset();
        d0 = d;
      }
      if (d0 >= 0 && d >= to) {
        const snaps = { dynamo: dynamo.snapshot(), sqs: sqs.snapshot(), s3: s3.snapshot() };
        const steps = d - d0;
        await t.waitForTask(taskId, { timeoutMs: 300_000 });
        return { taskId, steps, ...snaps };
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  const perStep = (w: Awaited<ReturnType<typeof window>>) => ({
    reads: sum(w.dynamo, READS, "calls") / w.steps,
    writes: sum(w.dynamo, WRITES, "calls") / w.steps,
    bytes: sum(w.dynamo, WRITES, "requestBytes") / w.steps,
    // Sends and deletes; receives depend on how the consumer polls (Lambda's
    // event source mapping batches them), so they are reported apart.
    sqs: (w.sqs.totalCalls - (w.sqs.calls.ReceiveMessage ?? 0)) / w.steps,
    receives: (w.sqs.calls.ReceiveMessage ?? 0) / w.steps,
    s3: w.s3.totalCalls / w.steps,
  });

  // 1. Overhead per step of a 100-step plan: gaps between consecutive commits.
  const run = await window({ plan: chainPlan(100), budget: { max_steps: 500 } }, 10, 90);
  const common = perStep(run);
  const commits = await t.api("GET", `/v1/tasks/${run.taskId}/branches/main/commits?limit=100`);
  const times = (commits.body.commits as Array<{ created_at: string }>)
    .map((c) => Date.parse(c.created_at))
    .reverse();
  const gaps = times.slice(1).map((at, i) => at - times[i]!);

  // 2. Bytes per step with 10 and with 1,000 variables already set.
  const inputs = (n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`v${i}`, `value number ${i}`]));
  const few = perStep(
    await window({ plan: chainPlan(60), inputs: inputs(10), budget: { max_steps: 500 } }, 10, 50),
  );
  const many = perStep(
    await window({ plan: chainPlan(60), inputs: inputs(1000), budget: { max_steps: 500 } }, 10, 50),
  );

  // 3. Steps per second with 20 tasks at once.
  const started = Date.now();
  const created = await Promise.all(
    Array.from({ length: 20 }, () => t.api("POST", "/v1/tasks", { plan: chainPlan(50) })),
  );
  await Promise.all(created.map((c) => t.waitForTask(c.body.task_id, { timeoutMs: 300_000 })));
  const throughput = (20 * 52) / ((Date.now() - started) / 1000);

  // 4. The VM's own overhead with LLM steps (the scripted LLM answers at once).
  const llmRun = await window({ plan: chainPlan(60, 2), budget: { max_steps: 500 } }, 10, 50);
  const llmCommits = await t.api(
    "GET",
    `/v1/tasks/${llmRun.taskId}/branches/main/commits?limit=100`,
  );
  const llmTimes = (llmCommits.body.commits as Array<{ created_at: string }>)
    .map((c) => Date.parse(c.created_at))
    .reverse();
  const llmGaps = llmTimes.slice(1).map((at, i) => at - llmTimes[i]!);
  const llm = perStep(llmRun);

  const result = {
    measured_at: new Date().toISOString(),
    step_overhead_ms: {
      median: median(gaps),
      p95: [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length * 0.95)],
    },
    llm_step_overhead_ms: { median: median(llmGaps) },
    steps_per_second_20_tasks: Math.round(throughput * 10) / 10,
    dynamodb: {
      reads_per_step: common.reads,
      writes_per_step: common.writes,
      bytes_written_per_step: Math.round(common.bytes),
      bytes_written_per_step_10_vars: Math.round(few.bytes),
      bytes_written_per_step_1000_vars: Math.round(many.bytes),
      reads_per_llm_step: llm.reads,
      writes_per_llm_step: llm.writes,
    },
    sqs: { requests_per_step: common.sqs + 1, local_receives_per_step: common.receives },
    s3: { puts_per_step: common.s3, gets_per_step: 0 },
    lambda: { worker_ms_per_step: median(gaps), memory_mb: 1024 },
  };
  const print = (label: string, value: unknown) =>
    process.stdout.write(`${label.padEnd(48)} ${value}\n`);
  print("median overhead per step, 100-step plan (ms)", result.step_overhead_ms.median);
  print("p95 overhead per step (ms)", result.step_overhead_ms.p95);
  print("median per step, half of them llm_generate (ms)", result.llm_step_overhead_ms.median);
  print("steps per second, 20 tasks at once", result.steps_per_second_20_tasks);
  print("DynamoDB reads per step", common.reads.toFixed(2));
  print("DynamoDB writes per step", common.writes.toFixed(2));
  print(
    "DynamoDB reads/writes per step with LLM steps",
    `${llm.reads.toFixed(2)} / ${llm.writes.toFixed(2)}`,
  );
  print("DynamoDB bytes written per step", Math.round(common.bytes));
  print("  with 10 variables already set", Math.round(few.bytes));
  print("  with 1,000 variables already set", Math.round(many.bytes));
  print("  ratio 1,000 / 10", (many.bytes / few.bytes).toFixed(2));
  print("SQS sends and deletes per step", common.sqs.toFixed(2));
  print("SQS receives per step (local poller, idle polls included)", common.receives.toFixed(2));
  const out = resolve(import.meta.dirname, "../../.stackvm/bench.json");
  await mkdir(resolve(out, ".."), { recursive: true });
  await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`\nwritten to ${out}\n`);
  probe.destroy();
  await t.stop();
}

await main();

/**
 * The goals of issue 22 alone, in one run (`npm run bench:state`): the same
 * measures as section 8 and the 450-variable task of `npm run bench`, without
 * its LangGraph baseline, throughput and 10,000-task table, for a machine too
 * busy to run the whole bench. Prints every goal with its figure and writes
 * `.stackvm/bench-state.json`.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { type Meterable, type MeterSnapshot, meter } from "@stackvm/aws";
import { itemSize } from "@stackvm/core";
import { startTestStack } from "../support/stack";
import { taskItems } from "./fill-table";
import {
  ANSWER_AT_ONCE,
  bigValuePlan,
  CommitWatcher,
  chainPlan,
  forkMedian,
  type Hookable,
  headAndDepth,
  JUMP_AGAIN,
  loopPlan,
  median,
  timedMedian,
  transferFloorMs,
  WIDE_SEED,
  widePlan,
} from "./workload";

const WRITES = ["PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem"];
const READS = ["GetItem", "BatchGetItem", "Query"];
const sum = (s: MeterSnapshot, names: string[], field: "calls" | "requestBytes") =>
  names.reduce((n, name) => n + (s[field][name] ?? 0), 0);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const print = (label: string, value: unknown) =>
  process.stdout.write(`${label.padEnd(66)} ${value}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

async function main() {
  const loads = [load()];
  const t = await startTestStack({ concurrency: 8 });
  t.llm.on("jmp_condition", () => JUMP_AGAIN);
  const watcher = new CommitWatcher(t.stack.system.step as unknown as Hookable);
  const dynamo = meter(t.stack.clients.dynamodb as unknown as Meterable);
  const s3 = meter(t.stack.clients.s3 as unknown as Meterable);
  const start = async (body: Record<string, unknown>) => {
    const created = await t.api("POST", "/v1/tasks", body);
    if (created.status !== 202) throw new Error(JSON.stringify(created.body));
    return created.body.task_id as string;
  };
  try {
    // Warm-up.
    await watcher.ended(await start({ plan: chainPlan(20) }));

    // Bytes per small step: a 100-step plan, steps 10-90.
    const small = await start({ plan: chainPlan(100) });
    let snap: { d: MeterSnapshot; s: MeterSnapshot } | undefined;
    watcher.atDepth(small, 10, () => {
      dynamo.reset();
      s3.reset();
    });
    watcher.atDepth(small, 90, () => {
      snap = { d: dynamo.snapshot(), s: s3.snapshot() };
    });
    await watcher.ended(small);
    const smallBytes = sum(snap!.d, WRITES, "requestBytes") / 80;
    const smallReads = sum(snap!.d, READS, "calls") / 80;
    const smallWrites = sum(snap!.d, WRITES, "calls") / 80;
    const smallItems = await taskItems(t, small);
    const smallBranch = itemSize(smallItems.find((i) => i.sk === "B#main")!);
    const smallCommit = Math.round(
      smallItems.filter((i) => i.type === "step").reduce((n, i) => n + itemSize(i), 0) /
        smallItems.filter((i) => i.type === "step").length,
    );

    // A 10 MB branch (1,000 variables of 10 KB) against a 10-variable one, and the
    // reverse order after, so that the machine's load drifting does not favour one.
    const wide = async (vars: number, kb: number) => {
      const from = vars / 4 + 10;
      const to = from + 140;
      const id = await start({
        plan: widePlan(vars, kb),
        inputs: { seed: WIDE_SEED, i: 0 },
        budget: { max_steps: 1_000 },
      });
      let m: { d: MeterSnapshot; s: MeterSnapshot } | undefined;
      watcher.atDepth(id, from, () => {
        dynamo.reset();
        s3.reset();
      });
      watcher.atDepth(id, to, () => {
        m = { d: dynamo.snapshot(), s: s3.snapshot() };
      });
      await watcher.ended(id);
      const branch = (await taskItems(t, id)).find((i) => i.sk === "B#main")!;
      return {
        id,
        ms: median(watcher.gaps(id, from, to)),
        reads: sum(m!.d, READS, "calls") / (to - from),
        writes: sum(m!.d, WRITES, "calls") / (to - from),
        bytes: sum(m!.d, WRITES, "requestBytes") / (to - from),
        s3: m!.s.totalCalls / (to - from),
        branchBytes: itemSize(branch),
      };
    };
    const ten1 = await wide(12, 0);
    const big1 = await wide(1_000, 10);
    const big2 = await wide(1_000, 10);
    const ten2 = await wide(12, 0);
    loads.push(load());
    const tenMs = median([ten1.ms, ten2.ms]);
    const bigMs = median([big1.ms, big2.ms]);

    // State, diff and fork at step 50 of the 10 MB task; its whole state at the head.
    const { head, at: at50 } = await headAndDepth(t.api, big1.id, 50);
    const cpu = { state: [], diff: [], fork: [], small: [[], [], []] } as {
      state: number[];
      diff: number[];
      fork: number[];
      small: [number[], number[], number[]];
    };
    const stateMs = await timedMedian(
      11,
      () => t.api("GET", `/v1/tasks/${big1.id}/commits/${at50}/state`),
      cpu.state,
    );
    const stateBody = (await t.api("GET", `/v1/tasks/${big1.id}/commits/${at50}/state`)).body;
    const stateBytes = Buffer.byteLength(JSON.stringify(stateBody));
    const floorMs = await transferFloorMs(stateBody);
    const diffMs = await timedMedian(
      11,
      () => t.api("GET", `/v1/tasks/${big1.id}/commits/${at50}/diff`),
      cpu.diff,
    );
    const headStateMs = await timedMedian(5, () =>
      t.api("GET", `/v1/tasks/${big1.id}/commits/${head}/state`),
    );
    const forkMs = await forkMedian(t.api, watcher, big1.id, at50, ANSWER_AT_ONCE, cpu.fork);
    // The same three at step 50 of the small 100-step task, in this run: the ratio
    // reads through the machine's load.
    const { at: small50 } = await headAndDepth(t.api, small, 50);
    const smallStateMs = await timedMedian(
      11,
      () => t.api("GET", `/v1/tasks/${small}/commits/${small50}/state`),
      cpu.small[0],
    );
    const smallDiffMs = await timedMedian(
      11,
      () => t.api("GET", `/v1/tasks/${small}/commits/${small50}/diff`),
      cpu.small[1],
    );
    const smallForkMs = await forkMedian(
      t.api,
      watcher,
      small,
      small50,
      ANSWER_AT_ONCE,
      cpu.small[2],
    );

    // One variable of 5 MB: set, read by a later step, shown in the state.
    const huge = await start({ plan: bigValuePlan(5), inputs: { seed: WIDE_SEED } });
    await watcher.ended(huge);
    const hugeTask = (await t.api("GET", `/v1/tasks/${huge}`)).body;
    const hugeVars = (await t.api("GET", `/v1/tasks/${huge}/branches/main`)).body.state.variables;

    // The task whose state grows to 450 variables: steps 900-1,000 against 1-100.
    const grow = await start({ plan: loopPlan(450), budget: { max_steps: 1_001 } });
    await watcher.ended(grow);
    const early = median(watcher.gaps(grow, 1, 100));
    const late = median(watcher.gaps(grow, 900, 1_000));
    const growItems = await taskItems(t, grow);
    const growBranch = itemSize(growItems.find((i) => i.sk === "B#main")!);
    loads.push(load());

    const result = {
      measured_at: new Date().toISOString(),
      load_average: loads,
      growth_450_vars: {
        steps_1_100_ms: round(early),
        steps_900_1000_ms: round(late),
        ratio: round(late / early),
        branch_item_bytes: growBranch,
      },
      ten_mb: {
        ms: round(bigMs),
        ten_var_ms: round(tenMs),
        ratio: round(bigMs / tenMs),
        runs_ms: [round(ten1.ms), round(big1.ms), round(big2.ms), round(ten2.ms)],
        branch_item_bytes: big1.branchBytes,
        ten_var_branch_item_bytes: ten1.branchBytes,
        reads_per_step: round(big1.reads),
        writes_per_step: round(big1.writes),
        bytes_written_per_step: Math.round(big1.bytes),
        ten_var_bytes_written_per_step: Math.round(ten1.bytes),
        s3_per_step: round(big1.s3),
        state_at_50_ms: round(stateMs),
        diff_at_50_ms: round(diffMs),
        fork_at_50_ms: round(forkMs),
        state_at_50_answer_bytes: stateBytes,
        state_at_50_transfer_floor_ms: round(floorMs),
        cpu_state_diff_fork_at_50_ms: [median(cpu.state), median(cpu.diff), median(cpu.fork)].map(
          (x) => round(x),
        ),
        small_task_cpu_state_diff_fork_at_50_ms: cpu.small.map((x) => round(median(x))),
        state_at_head_ms: round(headStateMs),
        small_task_state_diff_fork_at_50_ms: [
          round(smallStateMs),
          round(smallDiffMs),
          round(smallForkMs),
        ],
      },
      five_mb_value: {
        status: hugeTask.status,
        big: hugeVars.big?.size,
        copy: hugeVars.copy?.size,
        ref: hugeVars.big?.$ref,
        steps_ms: watcher.gaps(huge, 0, 5).map((g) => round(g)),
      },
      small_step: {
        bytes_written: Math.round(smallBytes),
        reads: smallReads,
        writes: smallWrites,
        branch_item_bytes: smallBranch,
        commit_item_bytes: smallCommit,
      },
    };
    process.stdout.write(
      `load average (1, 5, 15 min) at start, middle, end: ${loads.join(" | ")}\n\n`,
    );
    print(
      "450-variable task: steps 1-100 / 900-1,000 (median ms)",
      `${result.growth_450_vars.steps_1_100_ms} / ${result.growth_450_vars.steps_900_1000_ms}`,
    );
    print("  ratio (≤ 1.2 is the goal)", result.growth_450_vars.ratio);
    print("  its branch item at the end (bytes)", growBranch);
    print(
      "10 MB branch (1,000 × 10 KB) / 10-variable branch, median ms per step",
      `${result.ten_mb.ms} / ${result.ten_mb.ten_var_ms}`,
    );
    print(
      "  ratio (≤ 1.2 is the goal); runs 10-var, 10 MB, 10 MB, 10-var",
      `${result.ten_mb.ratio}; ${result.ten_mb.runs_ms.join(", ")}`,
    );
    print(
      "  branch item bytes, 10 MB / 10-variable",
      `${result.ten_mb.branch_item_bytes} / ${result.ten_mb.ten_var_branch_item_bytes}`,
    );
    print(
      "  DynamoDB reads / writes / bytes written per step, 10 MB branch",
      `${result.ten_mb.reads_per_step} / ${result.ten_mb.writes_per_step} / ${result.ten_mb.bytes_written_per_step}`,
    );
    print(
      "  bytes written per step, 10-variable branch",
      result.ten_mb.ten_var_bytes_written_per_step,
    );
    print(
      "state / diff / fork at step 50 of the 10 MB task (median ms; ≤ 50)",
      `${result.ten_mb.state_at_50_ms} / ${result.ten_mb.diff_at_50_ms} / ${result.ten_mb.fork_at_50_ms}`,
    );
    print(
      "  the same at step 50 of a 100-step task of small values, this run",
      result.ten_mb.small_task_state_diff_fork_at_50_ms.join(" / "),
    );
    print(
      "  ratios to the small task: state / diff / fork",
      [stateMs / smallStateMs, diffMs / smallDiffMs, forkMs / smallForkMs]
        .map((r) => round(r))
        .join(" / "),
    );
    print(
      "  CPU ms of the process per call, 10 MB task / small task",
      `${result.ten_mb.cpu_state_diff_fork_at_50_ms.join(" / ")}; ${result.ten_mb.small_task_cpu_state_diff_fork_at_50_ms.join(" / ")}`,
    );
    print("  the state's answer at step 50 of the 10 MB task (bytes)", stateBytes);
    print(
      "  the same answer from a bare Hono route, this run (median ms)",
      `${round(floorMs)}: the state read is ${round(stateMs / floorMs)}x its transfer`,
    );
    print(
      "state at the head of the 10 MB task, all 10 MB (median ms)",
      result.ten_mb.state_at_head_ms,
    );
    print(
      "a 5 MB variable: task, size shown in the state (big, copy), as",
      `${hugeTask.status}, ${hugeVars.big?.size}, ${hugeVars.copy?.size}, ${hugeVars.big?.$ref}`,
    );
    print(
      "  its steps (ms): set 100 KB, 1 MB, 5 MB, read it into copy, answer",
      result.five_mb_value.steps_ms.join(", "),
    );
    print(
      "DynamoDB bytes written per small step (≤ 2,500 is the goal)",
      result.small_step.bytes_written,
    );
    print(
      "  reads / writes per small step; branch / commit item bytes",
      `${smallReads} / ${smallWrites}; ${smallBranch} / ${smallCommit}`,
    );
    const out = resolve(import.meta.dirname, "../../.stackvm/bench-state.json");
    await mkdir(resolve(out, ".."), { recursive: true });
    await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`\nwritten to ${out}\n`);
  } finally {
    await t.stop();
  }
}

await main();

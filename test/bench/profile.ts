/**
 * `npm run profile`: where a step's milliseconds go on the local stack. Runs the
 * stack in this process (as `npm run bench` does), samples the CPU with V8's
 * profiler (the same as `node --cpu-prof`, but only around the workload, not
 * the start) and sorts every sample into a share of the step path:
 *
 * - our code: packages/* (core, adapters, the worker's handler, the API), zod;
 * - the AWS SDK: its serialization, signing and middleware (@aws-sdk, @smithy);
 * - the HTTP hop: Node's http, net and stream code, on either end of a request;
 * - the emulators: dynalite (and its LevelDB) and fauxqs (and Fastify);
 * - the poller's receive loop (packages/local/src/poller.ts);
 * - the bench's own client, Node's runtime (timers, promises), GC, idle.
 *
 * A sample goes to the HTTP hop when the function running is Node's http or
 * net code; otherwise to the nearest caller outside Node (so the SHA-256 of a
 * signature counts for the SDK, not for `node:crypto`). Two workloads: one task
 * of 100 steps (latency) and 20 tasks of 50 steps at once (throughput). Each
 * profile is written under `.stackvm/profile/` and opens in Chrome DevTools.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { resolve } from "node:path";
import { type Meterable, meter } from "@stackvm/aws";
import { startTestStack, type TestStack } from "../support/stack";
import { CommitWatcher, chainPlan, type Hookable } from "./workload";

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  parent?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The shares, in the order printed. */
export const SHARES = [
  "our code",
  "AWS SDK (serialization, signing, middleware)",
  "HTTP hop (node http/net/streams)",
  "dynalite (DynamoDB emulator)",
  "fauxqs (SQS/S3 emulator)",
  "poller receive loop",
  "bench client (fetch)",
  "the profiler itself",
  "node runtime (timers, promises, other)",
  "garbage collection",
  "other libraries",
  "idle",
] as const;
export type Share = (typeof SHARES)[number];

const PROFILER = /^node:inspector/;
const HTTP_HOP =
  /^node:(_http|http|https|net|stream|_stream|internal\/(http|streams|stream_base|net|js_stream|child_process))/;
const OWNERS: Array<[RegExp, Share]> = [
  [/packages\/local\/src\/poller\.ts/, "poller receive loop"],
  [/packages\/[a-z]+\/src\//, "our code"],
  [/node_modules\/(zod|hono|@hono)\//, "our code"],
  [
    /node_modules\/(@aws-sdk|@smithy|@aws-crypto|@aws|fast-xml-parser|bowser|tslib)\//,
    "AWS SDK (serialization, signing, middleware)",
  ],
  [
    /node_modules\/(dynalite|[a-z-]*level[a-z-]*|lazy|big\.js|async|once|buffer-crc32)\//,
    "dynalite (DynamoDB emulator)",
  ],
  [
    /node_modules\/(fauxqs|fastify|@fastify|avvio|find-my-way|light-my-request|pino[a-z-]*|abstract-logging|fast-[a-z-]+|secure-json-parse|rfdc|toad-cache|ajv|fast-uri)\//,
    "fauxqs (SQS/S3 emulator)",
  ],
  [/(undici|test\/(support|bench)\/)/, "bench client (fetch)"],
];

/** The share of one profile node, looking up its callers as the rule says. */
function shareOf(node: ProfileNode, byId: Map<number, ProfileNode>): Share {
  const name = node.callFrame.functionName;
  if (name === "(idle)") return "idle";
  if (name === "(garbage collector)") return "garbage collection";
  if (name === "(program)") return "node runtime (timers, promises, other)";
  let current: ProfileNode | undefined = node;
  let leafNode = true;
  while (current) {
    const { url } = current.callFrame;
    if (url !== "") {
      if (url.startsWith("node:")) {
        if (leafNode && HTTP_HOP.test(url)) return "HTTP hop (node http/net/streams)";
        if (url.startsWith("node:internal/deps/undici")) return "bench client (fetch)";
        if (PROFILER.test(url)) return "the profiler itself";
      } else {
        for (const [pattern, share] of OWNERS) if (pattern.test(url)) return share;
        return "other libraries";
      }
      leafNode = false;
    }
    current = current.parent === undefined ? undefined : byId.get(current.parent);
  }
  return "node runtime (timers, promises, other)";
}

/** Milliseconds of samples in each share. */
export function breakdown(profile: CpuProfile): Record<Share, number> {
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) byId.set(node.id, node);
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) {
      const c = byId.get(child);
      if (c) c.parent = node.id;
    }
  }
  const shareById = new Map<number, Share>();
  const out = Object.fromEntries(SHARES.map((s) => [s, 0])) as Record<Share, number>;
  profile.samples.forEach((id, i) => {
    let share = shareById.get(id);
    if (share === undefined) {
      share = shareOf(byId.get(id)!, byId);
      shareById.set(id, share);
    }
    out[share] += (profile.timeDeltas[i] ?? 0) / 1000;
  });
  return out;
}

type Meters = Array<ReturnType<typeof meter>>;

async function profiled<T>(session: Session, meters: Meters, work: () => Promise<T>) {
  for (const m of meters) m.reset();
  await session.post("Profiler.start");
  const cpu = process.cpuUsage();
  const result = await work();
  const { user, system } = process.cpuUsage(cpu);
  const { profile } = (await session.post("Profiler.stop")) as { profile: CpuProfile };
  const calls: Record<string, number> = {};
  for (const m of meters) Object.assign(calls, m.snapshot().calls);
  return { result, profile, calls, cpuMs: (user + system) / 1000 };
}

function table(
  title: string,
  shares: Record<Share, number>,
  steps: number,
  wallMs: number,
  calls: Record<string, number>,
  cpuMs: number,
) {
  const busy = SHARES.filter((s) => s !== "idle").reduce((n, s) => n + shares[s], 0);
  const lines = [
    `${title}: ${steps} steps in ${wallMs.toFixed(0)} ms wall, ${(wallMs / steps).toFixed(2)} ms per step; CPU busy ${(busy / steps).toFixed(2)} ms per step`,
    // Samples are taken on wall time: a busy machine that takes the core away
    // inflates them. The process's own CPU time (user + system) does not.
    `  process CPU time (user + system, the profiler's included): ${(cpuMs / steps).toFixed(2)} ms per step`,
    `  ${"share".padEnd(46)} ${"ms/step".padStart(8)} ${"% busy".padStart(7)}`,
  ];
  for (const share of SHARES) {
    const ms = shares[share];
    const pct = share === "idle" ? "" : `${((100 * ms) / busy).toFixed(1)}%`;
    lines.push(`  ${share.padEnd(46)} ${(ms / steps).toFixed(2).padStart(8)} ${pct.padStart(7)}`);
  }
  const perStep = Object.entries(calls)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name} ${(n / steps).toFixed(2)}`);
  lines.push(`  AWS requests per step: ${perStep.join(", ")}`);
  return lines.join("\n");
}

async function main() {
  const t: TestStack = await startTestStack({ concurrency: 8 });
  t.llm.on("text", () => "ok");
  const watcher = new CommitWatcher(t.stack.system.step as unknown as Hookable);
  // The SDK's middleware types are wider than the meter needs.
  const { clients } = t.stack;
  const meters = [clients.dynamodb, clients.sqs, clients.s3].map((c) =>
    meter(c as unknown as Meterable),
  );
  const start = async (steps: number) => {
    const created = await t.api("POST", "/v1/tasks", {
      plan: chainPlan(steps),
      budget: { max_steps: 2_000 },
    });
    if (created.status !== 202) throw new Error(JSON.stringify(created.body));
    return created.body.task_id as string;
  };
  // Warm up the JIT and the connections before sampling.
  await watcher.ended(await start(50));

  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 250 });

  const dir = resolve(import.meta.dirname, "../../.stackvm/profile");
  await mkdir(dir, { recursive: true });
  const report: Record<string, unknown> = { measured_at: new Date().toISOString() };
  const out: string[] = [];

  const one = await profiled(session, meters, async () => {
    const started = performance.now();
    const id = await start(100);
    await watcher.ended(id);
    return performance.now() - started;
  });
  const oneShares = breakdown(one.profile);
  out.push(table("one task, 100 steps", oneShares, 102, one.result, one.calls, one.cpuMs));
  report.one_task = {
    steps: 102,
    wall_ms: one.result,
    cpu_ms: one.cpuMs,
    ms: oneShares,
    calls: one.calls,
  };
  await writeFile(resolve(dir, "one-task.cpuprofile"), JSON.stringify(one.profile));

  const many = await profiled(session, meters, async () => {
    const started = performance.now();
    const ids = await Promise.all(Array.from({ length: 20 }, () => start(50)));
    await Promise.all(ids.map((id) => watcher.ended(id)));
    return performance.now() - started;
  });
  const manyShares = breakdown(many.profile);
  out.push(
    table("20 tasks of 50 steps at once", manyShares, 20 * 52, many.result, many.calls, many.cpuMs),
  );
  report.twenty_tasks = {
    steps: 20 * 52,
    wall_ms: many.result,
    cpu_ms: many.cpuMs,
    ms: manyShares,
    calls: many.calls,
  };
  await writeFile(resolve(dir, "twenty-tasks.cpuprofile"), JSON.stringify(many.profile));

  session.disconnect();
  await writeFile(resolve(dir, "profile.json"), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${out.join("\n\n")}\n\nprofiles written to ${dir}\n`);
  await t.stop();
}

await main();

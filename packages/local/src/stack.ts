/**
 * The whole system on one machine: embedded dynalite and fauxqs, the same AWS SDK
 * clients, adapters and handlers as on AWS, the Hono API on `@hono/node-server`,
 * a poller in the place of Lambda's SQS event source mapping (for the step queue
 * and for the DLQ), and timers in the place of the cron sweep.
 */

import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createApp } from "@stackvm/api";
import { type AwsClients, createAwsClients } from "@stackvm/aws";
import type { DueRun } from "@stackvm/core";
import { isErrorKind, type Log, sendWake, systemClock } from "@stackvm/core";
import {
  ConfigError,
  createScheduleHandler,
  loadConfig,
  recoverStarts,
  type System,
} from "@stackvm/functions";
import { bootstrap } from "./bootstrap";
import { startEmulators } from "./emulators";
import { type LlmSummary, llmSummary } from "./llm-summary";
import { LocalScheduler } from "./local-scheduler";
import { LocalStepQueue } from "./local-step-queue";
import { createLocalSystem } from "./local-system";
import { localMetrics } from "./prometheus-metrics";
import { startRunners } from "./runners";
import { LocalSandbox } from "./sandbox-invoker";
import type { LocalTestHooks } from "./testing/test-hooks";

export interface LocalStackOptions {
  /** Where data lives across restarts; null keeps everything in memory (tests). */
  dataDir: string | null;
  /** The API's port; 0 picks a free one. */
  port: number;
  host?: string;
  /** Settings as the environment gives them (LLM_MODEL, OPENAI_BASE_URL, ...). */
  env?: Record<string, string | undefined>;
  log: Log;
  /** Step batches handled at once (Lambda's concurrency). */
  concurrency?: number;
  /** A key provisioned for tenant `local` at start (STACKVM_BOOTSTRAP_API_KEY). */
  bootstrapApiKey?: string | null;
  /** Seconds a received step stays hidden before SQS hands it out again. */
  visibilityTimeoutSeconds?: number;
  /** Receives after which a step goes to the DLQ. */
  maxReceiveCount?: number;
  /** How often the sweep of stalled branches runs, and after how long a branch counts as stalled. */
  sweepIntervalMs?: number;
  stalledAfterMs?: number;
  /** How long `stop()` lets HTTP requests in flight finish before it cuts them (default 29 s, the longest API Gateway lets a request live). */
  drainMs?: number;
  /**
   * How long `stop()` waits for steps in flight (default 5 s); past it their
   * messages come back to the queue when their visibility runs out, as after a
   * crash, and run again on the next start.
   */
  stepGraceMs?: number;
}

export interface LocalStack {
  url: string;
  port: number;
  system: System;
  /** The key provisioned at start, or created and printed when none was given. */
  apiKey: string;
  endpoints: { dynamodb: string; sqs: string; s3: string };
  /** The stack's own listening servers: the API and both emulators (tests watch what reaches them). */
  servers: { api: Server; dynamodb: Server; fauxqs: Server };
  /** The LLM the worker calls (for the start-up banner); null when none is configured. */
  llm: LlmSummary | null;
  /** The AWS SDK clients every adapter uses (the benchmark meters them). */
  clients: AwsClients;
  queueUrl: string;
  dlqUrl: string;
  stop(): Promise<void>;
}

/**
 * Local recovery timing. The poller keeps the steps it runs hidden (it extends
 * their visibility while the handler runs), so the queue's timeout only says how
 * soon a killed process's steps come back: 10 s. A restart re-enqueues every
 * running branch at once, which finds a step lost between commit and enqueue
 * (locally, only a killed process loses one). The sweep runs every 10 s, so a
 * start cut short is repaired within 40 s of its marker; a running branch that
 * has not moved for two step timeouts (2 x 60 s, as on AWS) is re-enqueued. Not
 * sooner: on a busy stack a branch waits its turn in the queue for longer than
 * a step, and each re-enqueue of a branch that was not lost costs a read.
 */
const LOCAL_VISIBILITY_SECONDS = 10;
const LOCAL_SWEEP_INTERVAL_MS = 10_000;
const LOCAL_STALLED_AFTER_MS = 120_000;

const NAMES = {
  table: "stackvm",
  queue: "stackvm-steps",
  dlq: "stackvm-steps-dlq",
  bucket: "stackvm-blobs",
};

/**
 * Starts the whole system on this machine (see the module's comment); `hooks`
 * are for tests only (`testing/test-hooks.ts`).
 */
export async function startLocalStack(
  options: LocalStackOptions,
  hooks: LocalTestHooks = {},
): Promise<LocalStack> {
  const host = options.host ?? "127.0.0.1";
  const log = options.log;
  // The same sandbox handler as on Lambda, in its own process and network
  // namespace, started before any store is open so that it inherits none of
  // their descriptors.
  const ownSandbox =
    hooks.sandbox === undefined
      ? new LocalSandbox({
          allowNetwork: options.env?.STACKVM_SANDBOX_ALLOW_NETWORK === "1",
          ...(hooks.openSandboxBridge ? { openBridge: true } : {}),
          ...(hooks.warmPython === false ? { warmPython: false } : {}),
          log: (level, message) => log[level](message, { component: "sandbox" }),
        })
      : null;
  ownSandbox?.start();
  const emulators = await startEmulators({ dataDir: options.dataDir, host });
  const clients = createAwsClients({
    region: emulators.region,
    endpoints: emulators.endpoints,
    credentials: emulators.credentials,
  });
  const queues = await bootstrap(clients, NAMES, {
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? LOCAL_VISIBILITY_SECONDS,
    maxReceiveCount: options.maxReceiveCount ?? 5,
  });
  const config = loadConfig({
    ...options.env,
    AWS_REGION: emulators.region,
    STACKVM_TABLE: NAMES.table,
    STACKVM_QUEUE_URL: queues.queueUrl,
    STACKVM_DLQ_URL: queues.dlqUrl,
    STACKVM_BUCKET: NAMES.bucket,
  });
  // The local stand-in for EventBridge Scheduler fires into the scheduler function's handler.
  let fireSchedule: (run: DueRun) => Promise<unknown> = async () => undefined;
  const clock = hooks.clock ?? systemClock;
  const queue = new LocalStepQueue(clients.sqs, config.queueUrl);
  let publicUrl: string | null = config.publicUrl;
  const scheduler = new LocalScheduler({
    fire: (run) => fireSchedule(run),
    wake: (wake) => sendWake({ queue }, wake),
    clock,
    log,
  });
  // The guard refuses the stack's own listeners whatever the operator opened:
  // both emulators now, the API's port once it listens. (The sandbox host has
  // no port: it talks to this process over a pipe.)
  const ownPorts = new Set(config.ownPorts);
  for (const endpoint of Object.values(emulators.endpoints))
    ownPorts.add(Number(new URL(endpoint).port));
  if (options.port !== 0) ownPorts.add(options.port);
  const system = createLocalSystem(
    {
      config,
      clients,
      emulators,
      queue,
      scheduler,
      clock,
      sandbox: hooks.sandbox ?? ownSandbox!,
      log,
      dataDir: options.dataDir,
      ownPorts,
      publicUrl: () => publicUrl,
      env: options.env ?? {},
    },
    hooks,
  );
  fireSchedule = createScheduleHandler(system.schedules, log);
  await scheduler.load(await system.schedules.timers());

  /** A start that fails from here stops what it started, so that a message is all it leaves. */
  const abandon = async (error: unknown): Promise<never> => {
    scheduler.stop();
    await ownSandbox?.close();
    clients.destroy();
    await emulators.stop();
    throw error;
  };
  const apiKey = await provisionKey(system, options.bootstrapApiKey ?? null).catch(abandon);
  const stalledAfter =
    options.stalledAfterMs ??
    (options.env?.STACKVM_STALLED_AFTER_SECONDS
      ? config.stalledAfterSeconds * 1000
      : LOCAL_STALLED_AFTER_MS);
  const sweepDeps = system.sweep(stalledAfter);
  // Before the first request: repair the starts a killed predecessor cut short.
  const repaired = await recoverStarts(sweepDeps).catch(abandon);
  if (repaired > 0) log.info("repaired task starts cut short", { starts_repaired: repaired });
  const app = createApp(system.api);
  // Prometheus' /metrics (prometheus-metrics.ts): the figures CloudWatch gets on AWS.
  const metrics = localMetrics({
    sqs: clients.sqs,
    queueUrl: queues.queueUrl,
    dlqUrl: queues.dlqUrl,
    adminKey: config.adminKey,
  });
  const counted = system.step.onCommit;
  system.step.onCommit = (commit, branch) => {
    counted?.(commit, branch);
    metrics.onCommit(commit, branch);
  };
  const server = serve({
    fetch: (request, env) =>
      metrics.answer(request, (env.incoming as IncomingMessage).socket?.remoteAddress) ??
      app.fetch(request, env),
    port: options.port,
    hostname: host,
  });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", (error) => reject(listenError(error, host, options.port)));
  }).catch(abandon);
  const port = (server.address() as AddressInfo).port;
  ownPorts.add(port);
  const streams = trackStreams(server);

  const runners = startRunners({
    system,
    clients,
    queues,
    queue,
    metrics,
    sweepDeps,
    clock,
    log,
    bucket: config.bucket,
    llmTraceRetentionDays: config.llmTraceRetentionDays,
    maxReceiveCount: options.maxReceiveCount ?? 5,
    concurrency: options.concurrency ?? 4,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? LOCAL_VISIBILITY_SECONDS,
    sweepIntervalMs: options.sweepIntervalMs ?? LOCAL_SWEEP_INTERVAL_MS,
  });

  const url = `http://${host}:${port}`;
  publicUrl ??= url;
  log.info("StackVM is running", { url, data_dir: options.dataDir ?? "(in memory)" });
  let stopped = false;
  return {
    url,
    port,
    system,
    apiKey,
    llm: llmSummary(config),
    endpoints: emulators.endpoints,
    servers: { ...emulators.servers, api: server as unknown as Server },
    clients,
    queueUrl: queues.queueUrl,
    dlqUrl: queues.dlqUrl,
    async stop() {
      if (stopped) return;
      stopped = true;
      scheduler.stop();
      // The worker stops beside the drain, not after it: each took its own time before.
      const grace = options.stepGraceMs ?? 5_000;
      await Promise.all([drain(server, options.drainMs ?? 29_000, streams), runners.stop(grace)]);
      await ownSandbox?.close();
      clients.destroy();
      await emulators.stop();
    },
  };
}

/** Provisions the bootstrap key for tenant `local`, or creates one. */
async function provisionKey(system: System, key: string | null): Promise<string> {
  if (key) {
    await system.keys.create("local", "bootstrap", key).catch((error: unknown) => {
      // The key service's refusals (too short, another tenant's) are a wrong setting here.
      if (!isErrorKind(error, "unauthorized")) throw error;
      throw new ConfigError(`STACKVM_BOOTSTRAP_API_KEY: ${(error as Error).message}`);
    });
    return key;
  }
  return (await system.keys.create("local", "generated at start")).key;
}

/** A failure to listen, as a message naming the setting to change. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === "EADDRINUSE") {
    return new ConfigError(
      `PORT: ${host}:${port} is in use by another program; stop it, or set PORT to a free port`,
    );
  }
  if (error.code === "EACCES") {
    return new ConfigError(`PORT: this user may not listen on port ${port}; set PORT above 1023`);
  }
  return error;
}

/**
 * The responses in flight that are event streams: they never end by
 * themselves, so a stop ends them rather than wait out the drain for them (a
 * console left open held every stop for 29 s).
 */
function trackStreams(server: ReturnType<typeof serve>): Set<ServerResponse> {
  const open = new Set<ServerResponse>();
  (server as unknown as Server).on("request", (req: IncomingMessage, res: ServerResponse) => {
    // By the request: the adapter writes the stream's headers straight to the socket.
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (!path.endsWith("/events") && !String(req.headers.accept).includes("text/event-stream"))
      return;
    open.add(res);
    res.once("close", () => open.delete(res));
  });
  return open;
}

/**
 * Closes the server gracefully: no new connection is taken, idle keep-alive
 * connections close at once, event streams are ended (their clients reconnect
 * with Last-Event-ID), and requests in flight get `drainMs` to finish (each
 * connection closes after its answer) before the rest are cut.
 */
async function drain(
  server: ReturnType<typeof serve>,
  drainMs: number,
  responses: Set<ServerResponse>,
): Promise<void> {
  const http = server as unknown as {
    closeIdleConnections?: () => void;
    closeAllConnections?: () => void;
  };
  await new Promise<void>((resolve) => {
    const cut = setTimeout(() => http.closeAllConnections?.(), drainMs);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    http.closeIdleConnections?.();
    for (const res of responses) res.socket?.destroy();
  });
}

/**
 * What runs in the background of the local stack in the place of AWS's event
 * sources and crons: the step queue's poller (Lambda's SQS event source
 * mapping), the DLQ's, the sweep of stalled branches on a timer, the expiry of
 * LLM traces (S3's lifecycle rule), and the resumption of running branches at
 * start. The handlers are the Lambda functions' own.
 */
import type { AwsClients } from "@stackvm/aws";
import { S3Blobs } from "@stackvm/aws";
import type { Clock, Log } from "@stackvm/core";
import {
  createDlqHandler,
  createSweepHandler,
  createWorkerHandler,
  resumeRunning,
  type SweepHandlerDeps,
  type System,
} from "@stackvm/functions";
import type { LocalStepQueue } from "./local-step-queue";
import { startPoller } from "./poller";
import type { LocalMetrics } from "./prometheus-metrics";
import { startTraceExpiry } from "./trace-expiry";

export interface RunnersOptions {
  system: System;
  clients: AwsClients;
  queues: { queueUrl: string; dlqUrl: string };
  queue: LocalStepQueue;
  metrics: LocalMetrics;
  sweepDeps: SweepHandlerDeps;
  clock: Clock;
  log: Log;
  bucket: string;
  llmTraceRetentionDays: number;
  maxReceiveCount: number;
  concurrency: number;
  visibilityTimeoutSeconds: number;
  sweepIntervalMs: number;
}

/** Starts the pollers and timers; `stop(graceMs)` lets batches in flight finish for up to `graceMs`. */
export function startRunners(o: RunnersOptions): { stop(graceMs: number): Promise<void> } {
  const { system, clients, queues, metrics, log } = o;
  const worker = startPoller({
    sqs: clients.sqs,
    queueUrl: queues.queueUrl,
    handler: metrics.countingRetries(
      createWorkerHandler(system.step, system.webhooks, system.knowledgePort, o.maxReceiveCount),
    ),
    concurrency: o.concurrency,
    visibilityTimeoutSeconds: o.visibilityTimeoutSeconds,
    retimed: o.queue.retimed,
  });
  const dlq = startPoller({
    sqs: clients.sqs,
    queueUrl: queues.dlqUrl,
    handler: metrics.countingDlq(createDlqHandler(system.dlq)),
    concurrency: 1,
  });
  // Once serving and polling: resume every running branch at once, in the background.
  resumeRunning(o.sweepDeps).then(
    (reenqueued) => {
      if (reenqueued > 0) log.info("resumed running branches", { reenqueued });
    },
    (error: unknown) => log.error("resuming running branches failed", { error: String(error) }),
  );
  const sweepOnce = createSweepHandler(o.sweepDeps);
  const sweep = setInterval(() => {
    sweepOnce().catch((error: unknown) => log.error("sweep failed", { error: String(error) }));
  }, o.sweepIntervalMs);
  sweep.unref();
  // LLM traces past their retention (S3's lifecycle rule does this on AWS).
  const traceExpiry = startTraceExpiry({
    blobs: new S3Blobs(clients.s3, o.bucket),
    retentionDays: o.llmTraceRetentionDays,
    clock: o.clock,
    log,
  });
  return {
    async stop(graceMs) {
      clearInterval(sweep);
      traceExpiry.stop();
      await Promise.all([worker.stop(graceMs), dlq.stop(graceMs)]);
    },
  };
}

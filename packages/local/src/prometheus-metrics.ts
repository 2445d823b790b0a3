/**
 * The local stack's metrics in Prometheus' text format (`GET /metrics`), the
 * same figures the functions send to CloudWatch on AWS in the embedded metric
 * format (`packages/functions/src/step-metrics.ts`): steps and their duration,
 * LLM calls, tokens and cost, step errors by code, branches ended by status,
 * step messages returned to the queue to be tried again, DLQ arrivals, and the
 * depths of the step queue and the DLQ (read from the queue at each scrape).
 *
 * Operator only: the route answers only requests from loopback and, where an
 * operator key is set (`STACKVM_ADMIN_KEY`), only with it as the bearer token.
 * A request a proxy forwarded (a tunnel to the laptop for webhooks, a reverse
 * proxy) comes from loopback too: one with a forwarding header is refused.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { BranchRecord, CommitRecord } from "@stackvm/core";
import type { WorkerHandler } from "@stackvm/functions";
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export interface LocalMetrics {
  onCommit(commit: CommitRecord, branch: BranchRecord): void;
  /** The worker's handler, counting the records each batch sends back to be tried again. */
  countingRetries(handler: WorkerHandler): WorkerHandler;
  /** The DLQ's handler, counting the records that reached it. */
  countingDlq<E extends { Records: unknown[] }, R>(
    handler: (event: E) => Promise<R>,
  ): (event: E) => Promise<R>;
  /** Answers `GET /metrics`, or null when `request` is not that route. */
  answer(request: Request, remoteAddress: string | undefined): Promise<Response> | null;
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;
/** Headers a proxy adds: the request came from elsewhere, whatever the socket says. */
const FORWARDED = ["forwarded", "x-forwarded-for", "x-forwarded-host", "x-real-ip"];

const digest = (s: string) => createHash("sha256").update(s).digest();

export function localMetrics(options: {
  sqs: SQSClient;
  queueUrl: string;
  dlqUrl: string;
  adminKey: string | null;
}): LocalMetrics {
  const registry = new Registry();
  const counter = (name: string, help: string, labelNames: string[] = []) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const steps = counter("stackvm_steps_total", "Steps committed");
  const duration = new Histogram({
    name: "stackvm_step_duration_seconds",
    help: "Duration of a step, its commit included",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const llmCalls = counter("stackvm_llm_calls_total", "LLM calls made by steps");
  const tokens = counter("stackvm_llm_tokens_total", "LLM tokens, by kind", ["kind"]);
  const cost = counter("stackvm_llm_cost_usd_total", "LLM cost in US dollars");
  const errors = counter("stackvm_step_errors_total", "Steps that failed, by error code", ["code"]);
  const ended = counter("stackvm_branches_ended_total", "Branches that ended, by status", [
    "status",
  ]);
  const retries = counter(
    "stackvm_step_retries_total",
    "Queue messages returned to be tried again",
  );
  const dlq = counter("stackvm_dlq_arrivals_total", "Messages that reached the dead-letter queue");
  const depth = (url: string) => async () => {
    const out = await options.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    return (
      Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  };
  const queueDepth = depth(options.queueUrl);
  const dlqDepth = depth(options.dlqUrl);
  new Gauge({
    name: "stackvm_queue_depth",
    help: "Messages in the step queue, in flight included",
    registers: [registry],
    async collect() {
      this.set(await queueDepth());
    },
  });
  new Gauge({
    name: "stackvm_dlq_depth",
    help: "Messages in the dead-letter queue",
    registers: [registry],
    async collect() {
      this.set(await dlqDepth());
    },
  });

  return {
    onCommit(commit) {
      steps.inc();
      duration.observe(commit.duration_ms / 1000);
      const calls = commit.llm_calls;
      if (calls.length > 0) {
        llmCalls.inc(calls.length);
        tokens.inc(
          { kind: "input" },
          calls.reduce((n, c) => n + c.input_tokens, 0),
        );
        tokens.inc(
          { kind: "output" },
          calls.reduce((n, c) => n + c.output_tokens, 0),
        );
        cost.inc(calls.reduce((n, c) => n + c.cost_usd, 0));
      }
      const error = commit.error as { code?: string } | null;
      if (error?.code) errors.inc({ code: error.code });
      if (commit.status_after !== "running") ended.inc({ status: commit.status_after });
    },
    countingRetries: (handler) => async (event, context) => {
      const answer = await handler(event, context);
      if (answer.batchItemFailures.length > 0) retries.inc(answer.batchItemFailures.length);
      return answer;
    },
    countingDlq: (handler) => async (event) => {
      if (event.Records.length > 0) dlq.inc(event.Records.length);
      return handler(event);
    },
    answer(request, remoteAddress) {
      if (new URL(request.url).pathname !== "/metrics") return null;
      return (async () => {
        const json = { "content-type": "application/json" };
        if (request.method !== "GET")
          return new Response(
            JSON.stringify({ error: { code: "method_not_allowed", message: "GET /metrics only" } }),
            { status: 405, headers: { ...json, allow: "GET" } },
          );
        const forwarded = FORWARDED.filter((h) => request.headers.has(h));
        if (forwarded.length > 0)
          return new Response(
            JSON.stringify({
              error: {
                code: "forbidden",
                message: `/metrics answers only this machine: a request a proxy forwarded (${forwarded.join(", ")}) is refused; scrape the stack's port directly`,
              },
            }),
            { status: 403, headers: json },
          );
        if (!remoteAddress || !LOOPBACK.test(remoteAddress))
          return new Response(
            JSON.stringify({
              error: {
                code: "forbidden",
                message: "/metrics answers only this machine (loopback)",
              },
            }),
            { status: 403, headers: json },
          );
        if (
          options.adminKey !== null &&
          !timingSafeEqual(
            digest(request.headers.get("authorization") ?? ""),
            digest(`Bearer ${options.adminKey}`),
          )
        )
          return new Response(
            JSON.stringify({
              error: {
                code: "unauthorized",
                message: "/metrics needs the operator key (STACKVM_ADMIN_KEY) as the bearer token",
              },
            }),
            { status: 401, headers: json },
          );
        return new Response(await registry.metrics(), {
          status: 200,
          headers: { "content-type": registry.contentType },
        });
      })();
    },
  };
}

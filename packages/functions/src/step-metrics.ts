/**
 * Metrics of the step path in CloudWatch's embedded metric format (Powertools'
 * Metrics): steps and their latency, LLM calls, tokens and cost, step errors by
 * code, branches that ended by status, and DLQ arrivals. Entry files flush them
 * once per invocation.
 */
import { MetricUnit } from "@aws-lambda-powertools/metrics";

/** A unit name (`Count`, `Milliseconds`, ...). */
type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

import type { BranchRecord, CommitRecord } from "@stackvm/core";

/** The part of Powertools' `Metrics` this uses (a fake in tests). */
export interface MetricSink {
  addMetric(name: string, unit: Unit, value: number): unknown;
  singleMetric(): {
    addDimension(name: string, value: string): unknown;
    addMetric(name: string, unit: Unit, value: number): unknown;
  };
}

/** An `onCommit` hook for the step function that records each commit's metrics. */
export function stepMetrics(
  sink: MetricSink,
): (commit: CommitRecord, branch: BranchRecord) => void {
  return (commit) => {
    sink.addMetric("Steps", MetricUnit.Count, 1);
    sink.addMetric("StepLatency", MetricUnit.Milliseconds, commit.duration_ms);
    const calls = commit.llm_calls;
    if (calls.length > 0) {
      sink.addMetric("LlmCalls", MetricUnit.Count, calls.length);
      sink.addMetric(
        "LlmInputTokens",
        MetricUnit.Count,
        sum(calls, (c) => c.input_tokens),
      );
      sink.addMetric(
        "LlmOutputTokens",
        MetricUnit.Count,
        sum(calls, (c) => c.output_tokens),
      );
      sink.addMetric(
        "LlmCostUsd",
        MetricUnit.NoUnit,
        sum(calls, (c) => c.cost_usd),
      );
    }
    const error = commit.error as { code?: string } | null;
    if (error?.code) {
      const single = sink.singleMetric();
      single.addDimension("ErrorCode", error.code);
      single.addMetric("StepErrors", MetricUnit.Count, 1);
    }
    if (commit.status_after !== "running") {
      const single = sink.singleMetric();
      single.addDimension("Status", commit.status_after);
      single.addMetric("BranchesEnded", MetricUnit.Count, 1);
    }
  };
}

const sum = <T>(items: T[], of: (item: T) => number) => items.reduce((n, i) => n + of(i), 0);

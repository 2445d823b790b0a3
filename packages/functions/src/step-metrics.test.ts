import { MetricUnit } from "@aws-lambda-powertools/metrics";

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

import type { BranchRecord, CommitRecord } from "@stackvm/core";
import { describe, expect, it } from "vitest";
import { type MetricSink, stepMetrics } from "./step-metrics";

function recordingSink() {
  const metrics: Array<[string, Unit, number, Record<string, string>]> = [];
  const sink: MetricSink = {
    addMetric: (name, unit, value) => metrics.push([name, unit, value, {}]),
    singleMetric: () => {
      const dims: Record<string, string> = {};
      return {
        addDimension: (name, value) => {
          dims[name] = value;
        },
        addMetric: (name, unit, value) => metrics.push([name, unit, value, dims]),
      };
    },
  };
  return { sink, metrics };
}

const commit = (over: Partial<CommitRecord>) =>
  ({
    duration_ms: 12,
    llm_calls: [],
    error: null,
    status_after: "running",
    ...over,
  }) as CommitRecord;
const branch = {} as BranchRecord;

describe("stepMetrics", () => {
  it("counts a step and its latency, and the tokens and cost of its LLM calls", () => {
    const { sink, metrics } = recordingSink();
    stepMetrics(sink)(
      commit({
        llm_calls: [
          {
            purpose: "llm_generate",
            model: "m",
            input_tokens: 10,
            output_tokens: 4,
            cost_usd: 0.5,
            latency_ms: 1,
          },
          {
            purpose: "llm_generate",
            model: "m",
            input_tokens: 5,
            output_tokens: 1,
            cost_usd: 0.25,
            latency_ms: 1,
          },
        ],
      }),
      branch,
    );
    expect(metrics.map(([n, , v]) => [n, v])).toEqual([
      ["Steps", 1],
      ["StepLatency", 12],
      ["LlmCalls", 2],
      ["LlmInputTokens", 15],
      ["LlmOutputTokens", 5],
      ["LlmCostUsd", 0.75],
    ]);
  });

  it("counts step errors by code and ended branches by status", () => {
    const { sink, metrics } = recordingSink();
    stepMetrics(sink)(
      commit({ error: { code: "bad_tool_input" }, status_after: "failed" }),
      branch,
    );
    expect(metrics.filter(([, , , d]) => Object.keys(d).length > 0)).toEqual([
      ["StepErrors", MetricUnit.Count, 1, { ErrorCode: "bad_tool_input" }],
      ["BranchesEnded", MetricUnit.Count, 1, { Status: "failed" }],
    ]);
  });
});

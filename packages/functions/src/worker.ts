/**
 * Lambda entry of the worker: one SQS message is one step; partial batch
 * responses return only failed records to the queue.
 */
import { Metrics } from "@aws-lambda-powertools/metrics";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { LambdaSandbox } from "@stackvm/aws";
import { awsRuntime } from "./aws-system";
import { llmPort } from "./llm-port";
import { stepMetrics } from "./step-metrics";
import { createWorkerHandler } from "./worker-handler";

// The worker is the only function that invokes the sandbox and the LLM.
const runtime = awsRuntime(
  process.env,
  (config) =>
    config.sandboxFunction
      ? new LambdaSandbox(new LambdaClient({ region: config.region }), config.sandboxFunction)
      : null,
  (config) => llmPort(config.openai),
);

const metrics = new Metrics({ namespace: "StackVM", serviceName: "worker" });
const handle = createWorkerHandler(
  { ...runtime.system.step, onCommit: stepMetrics(metrics) },
  runtime.system.webhooks,
);

export const handler: typeof handle = async (event, context) => {
  try {
    return await handle(event, context);
  } finally {
    metrics.publishStoredMetrics();
  }
};

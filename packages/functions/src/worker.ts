/**
 * Lambda entry of the worker: one SQS message is one step; partial batch
 * responses return only failed records to the queue.
 */
import { Metrics } from "@aws-lambda-powertools/metrics";
import { lazyLambdaSandbox, lazyLanceIndex } from "@stackvm/aws/lambda-worker";
import { awsRuntime } from "./aws-system";
import { embeddingsPort } from "./embeddings-port";
import { llmPort } from "./llm-port";
import { stepMetrics } from "./step-metrics";
import { createWorkerHandler } from "./worker-handler";

// The worker is the only function that invokes the sandbox and the LLM; both
// clients load on first use (a step that calls neither does not pay for them).
const runtime = awsRuntime(
  process.env,
  (config) =>
    config.sandboxFunction ? lazyLambdaSandbox(config.region, config.sandboxFunction) : null,
  (config) => llmPort(config),
  // LanceDB on S3 (its native module installed beside the bundle) and the embeddings: on first use.
  (config) => ({
    knowledgeIndex: lazyLanceIndex({ root: config.knowledge.indexUri }),
    embeddings: embeddingsPort(config),
  }),
);

const metrics = new Metrics({ namespace: "StackVM", serviceName: "worker" });
const handle = createWorkerHandler(
  { ...runtime.system.step, onCommit: stepMetrics(metrics) },
  runtime.system.webhooks,
  runtime.system.knowledge?.ingest,
);

export const handler: typeof handle = async (event, context) => {
  try {
    return await handle(event, context);
  } finally {
    metrics.publishStoredMetrics();
  }
};

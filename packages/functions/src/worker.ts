/**
 * Lambda entry of the worker: one SQS message is one step; partial batch
 * responses return only failed records to the queue.
 */
import { Metrics } from "@aws-lambda-powertools/metrics";
import { lazyLambdaKnowledge, lazyLambdaSandbox } from "@stackvm/aws/lambda-worker";
import { awsStepSystem } from "./aws-system";
import { ConfigError } from "./config";
import { llmPort } from "./llm-port";
import { routeSandbox } from "./sandbox-route";
import { stepMetrics } from "./step-metrics";
import { createWorkerHandler } from "./worker-handler";

// The worker is the only function that invokes the sandbox (and the data
// sandbox, for Python that imports the data libraries), the knowledge
// function and the LLM; each client loads on first use (a step that calls none
// of them does not pay for it). LanceDB and the PDF reader are in the
// knowledge function, not here. Only what steps use is built: not the API's
// services, the schedules' or knowledge's own.
const { system } = awsStepSystem(process.env, {
  sandbox: (config) =>
    config.sandboxFunction
      ? routeSandbox(
          lazyLambdaSandbox(config.region, config.sandboxFunction),
          config.sandboxDataFunction
            ? lazyLambdaSandbox(config.region, config.sandboxDataFunction)
            : null,
        )
      : null,
  llm: (config) => llmPort(config),
  knowledge: (config) => {
    if (config.knowledgeFunction === null) {
      throw new ConfigError(
        "STACKVM_KNOWLEDGE_FUNCTION is not set: the worker reaches knowledge through the knowledge function (infra/knowledge.ts sets it)",
      );
    }
    return lazyLambdaKnowledge(config.region, config.knowledgeFunction);
  },
});

const metrics = new Metrics({ namespace: "StackVM", serviceName: "worker" });
const handle = createWorkerHandler(
  { ...system.step, onCommit: stepMetrics(metrics) },
  system.webhooks,
  system.knowledgePort,
);

export const handler: typeof handle = async (event, context) => {
  try {
    return await handle(event, context);
  } finally {
    metrics.publishStoredMetrics();
  }
};

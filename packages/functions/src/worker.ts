/**
 * Lambda entry of the worker: one SQS message is one step; partial batch
 * responses return only failed records to the queue.
 */
import { LambdaClient } from "@aws-sdk/client-lambda";
import { LambdaSandbox } from "@stackvm/aws";
import { awsRuntime } from "./aws-system";
import { llmPort } from "./llm-port";
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

export const handler = createWorkerHandler(runtime.system.step);

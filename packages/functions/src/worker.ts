/**
 * Lambda entry of the worker: one SQS message is one step; partial batch
 * responses return only failed records to the queue.
 */
import { LambdaSandbox } from "@stackvm/aws";
import { awsRuntime } from "./aws-system";
import { createWorkerHandler } from "./worker-handler";

// The worker is the only function that invokes the sandbox.
const runtime = awsRuntime(process.env, (config, clients) =>
  config.sandboxFunction ? new LambdaSandbox(clients.lambda, config.sandboxFunction) : null,
);

export const handler = createWorkerHandler(runtime.system.step);

/**
 * Lambda entry of the worker: one SQS message is one step; partial batch
 * responses return only failed records to the queue.
 */
import { awsRuntime } from "./aws-system";
import { createWorkerHandler } from "./worker-handler";

const runtime = awsRuntime();

export const handler = createWorkerHandler(runtime.system.step);

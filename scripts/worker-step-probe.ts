/**
 * The worker's first step in a fresh process, for `npm run bundle` and the
 * test of what a step loads (test/infra/worker-modules.test.ts): the worker's
 * own wiring (worker.ts and system.ts: `createStepSystem`, the lazy LLM,
 * sandbox, knowledge and MCP adapters, the DynamoDB and SQS clients built at
 * start, Powertools' logger and metrics) with the in-memory store, blobs and
 * queue in place of DynamoDB, S3 and SQS, which cannot be reached here.
 * Bundled like a function (scripts/bundles.ts). `newTask` creates a task as the
 * API would and answers the store's items and the task's first step message;
 * `firstStep` takes them (in another process: creating a task is the API's
 * work, which loads what checking a plan needs) and hands the message to the
 * handler as Lambda would, and answers how long the step took.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { createDataClients, lazyMcpClient } from "@stackvm/aws/lambda";
import { lazyLambdaKnowledge, lazyLambdaSandbox } from "@stackvm/aws/lambda-worker";
import { type Item, systemClock } from "@stackvm/core";
import { CreateTaskInput } from "@stackvm/core/api-records";
import { MemoryBlobs, MemoryItemStore, MemoryQueue } from "@stackvm/core/testing";
import type { Context, SQSEvent } from "aws-lambda";
import { powertoolsLog } from "../packages/functions/src/aws-system";
import { loadConfig } from "../packages/functions/src/config";
import { llmPort } from "../packages/functions/src/llm-port";
import { stepMetrics } from "../packages/functions/src/step-metrics";
import { createStepSystem } from "../packages/functions/src/system";
import { systemOptions } from "../packages/functions/src/system-options";
import { createWorkerHandler } from "../packages/functions/src/worker-handler";

const config = loadConfig(process.env);
const log = powertoolsLog(new Logger({ serviceName: "stackvm", logLevel: "ERROR" }));
// Built at start as the worker builds them; the probe's steps do not send with them.
export const clients = createDataClients({ region: config.region });
const queue = new MemoryQueue({ clock: systemClock });
const items = new MemoryItemStore();
const system = createStepSystem(
  {
    items,
    blobs: new MemoryBlobs({ clock: systemClock }),
    queue,
    clock: systemClock,
    sandbox: lazyLambdaSandbox(config.region, "probe-sandbox"),
    llm: llmPort(config),
    knowledge: lazyLambdaKnowledge(config.region, "probe-knowledge"),
    mcp: lazyMcpClient(),
  },
  systemOptions(config, log, false),
);
const metrics = new Metrics({ namespace: "StackVM", serviceName: "worker" });
const handle = createWorkerHandler(
  { ...system.step, onCommit: stepMetrics(metrics) },
  system.webhooks,
  system.knowledgePort,
);

/** A task as the API left it: the store's items and its first step message. */
export interface NewTask {
  items: Item[];
  body: string;
  receiptHandle: string;
}

/** Creates a task (a plan of two assigns) as the API would: the store's items and its first step message. */
export async function newTask(): Promise<NewTask> {
  const plan = [
    { seq_no: 0, type: "assign", parameters: { greeting: "hello" } },
    { seq_no: 1, type: "assign", parameters: { final_answer: "${greeting}, world" } },
  ];
  await system.tasks.create("probe", CreateTaskInput.parse({ plan }));
  const [message] = await queue.receive(1);
  if (!message) throw new Error("the task enqueued no step");
  return { items: items.dump(), body: message.body, receiptHandle: message.receiptHandle };
}

/**
 * Runs a task's first step through the worker's handler; answers its
 * milliseconds. Given a task `newTask` made (in another process), it stores
 * that task's items first; else it creates one here.
 */
export async function firstStep(task?: NewTask): Promise<number> {
  let message = task;
  if (message) {
    for (const item of message.items) await items.put(item);
  } else {
    message = await newTask();
  }
  const event = {
    Records: [
      {
        messageId: "probe-1",
        receiptHandle: message.receiptHandle,
        body: message.body,
        attributes: {
          ApproximateReceiveCount: "1",
          SentTimestamp: "0",
          SenderId: "probe",
          ApproximateFirstReceiveTimestamp: "0",
          MessageGroupId: "probe",
        },
        messageAttributes: {},
        md5OfBody: "",
        eventSource: "aws:sqs",
        eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:steps.fifo",
        awsRegion: "us-east-1",
      },
    ],
  } as SQSEvent;
  const started = performance.now();
  const answer = await handle(event, { functionName: "worker" } as Context);
  const ms = performance.now() - started;
  if (answer.batchItemFailures.length > 0) throw new Error("the probe's step failed");
  metrics.clearMetrics();
  return ms;
}

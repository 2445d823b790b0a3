/**
 * The step path with the in-memory adapters: the same `createSystem`, API app
 * and worker handler as the local stack and Lambda, over `MemoryItemStore`,
 * `MemoryBlobs` and `MemoryQueue`, with no emulator, no HTTP and no AWS SDK.
 * A pump plays the event source mapping: it receives batches of up to 10 from
 * the queue, hands each to the worker handler as an `SQSEvent` and deletes the
 * records that succeeded. What it costs is our code's own cost per step, the
 * figure the bench sets beside LangGraph's.
 */

import { createApp } from "@stackvm/api";
import type { LlmPort, ReceivedMessage } from "@stackvm/core";
import { type QueueSendOptions, type SandboxPort, silentLog, systemClock } from "@stackvm/core";
import { MemoryBlobs, MemoryItemStore, MemoryQueue } from "@stackvm/core/testing";
import {
  createSystem,
  createWorkerHandler,
  loadConfig,
  type System,
  systemOptions,
} from "@stackvm/functions";
import type { Context, SQSEvent } from "aws-lambda";
import { JUMP_AGAIN } from "./workload";

/** A memory queue that tells the pump when a message may have become receivable. */
class SignallingQueue extends MemoryQueue {
  #wake: Array<() => void> = [];
  override async send(body: unknown, options: QueueSendOptions): Promise<void> {
    await super.send(body, options);
    this.#signal();
  }
  override async delete(receiptHandle: string): Promise<void> {
    await super.delete(receiptHandle);
    this.#signal();
  }
  /** Resolves at the next send or delete, or after `ms`. */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  #signal() {
    const wake = this.#wake;
    this.#wake = [];
    for (const w of wake) w();
  }
}

/** Answers at once: "ok" to free text, "jump again" to a jump's condition. */
const llm: LlmPort = {
  async complete(request) {
    const text = request.jsonSchema?.name === "jmp_condition" ? JUMP_AGAIN : "ok";
    return { text, model: request.model, inputTokens: 10, outputTokens: 5 };
  },
};

const noSandbox: SandboxPort = {
  run: async () => {
    throw new Error("the bench runs no code");
  },
};

const context = { functionName: "worker", getRemainingTimeInMillis: () => 60_000 } as Context;

function event(messages: ReceivedMessage[]): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.messageId,
      receiptHandle: m.receiptHandle,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(Date.now()),
        SenderId: "000000000000",
        ApproximateFirstReceiveTimestamp: String(Date.now()),
        MessageGroupId: JSON.parse(m.body).task_id,
      },
      messageAttributes: {},
      md5OfBody: "",
      eventSource: "aws:sqs",
      eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:steps.fifo",
      awsRegion: "us-east-1",
    })),
  };
}

export interface MemoryStack {
  system: System;
  /** Starts a task from a plan through the API app (in process, no HTTP); answers its id. */
  start(body: Record<string, unknown>): Promise<string>;
  stop(): Promise<void>;
}

/** Starts the in-memory system and `concurrency` pump loops. */
export async function startMemoryStack(concurrency = 8): Promise<MemoryStack> {
  const config = loadConfig({
    AWS_REGION: "us-east-1",
    STACKVM_TABLE: "stackvm",
    STACKVM_QUEUE_URL: "memory://steps",
    STACKVM_DLQ_URL: "memory://steps-dlq",
    STACKVM_BUCKET: "stackvm-blobs",
    OPENAI_API_KEY: "bench",
    LLM_MODEL: "bench-model",
    STACKVM_RATE_LIMIT_RPS: "100000",
    STACKVM_MAX_RUNNING_TASKS: "1000",
  });
  const queue = new SignallingQueue({ visibilityTimeoutSeconds: 60 });
  const system = createSystem(
    {
      items: new MemoryItemStore(),
      blobs: new MemoryBlobs(),
      queue,
      clock: systemClock,
      sandbox: noSandbox,
      llm,
    },
    systemOptions(config, silentLog, true),
  );
  const handler = createWorkerHandler(system.step, system.webhooks);
  const app = createApp(system.api);
  const { key } = await system.keys.create("local", "bench");

  let running = true;
  // One receiver at a time, as the local poller: the others wait their turn.
  let turn: Promise<void> = Promise.resolve();
  const pump = async () => {
    while (running) {
      let release!: () => void;
      const previous = turn;
      turn = new Promise((r) => {
        release = r;
      });
      await previous;
      let messages = await queue.receive(10);
      while (running && messages.length === 0) {
        await queue.changed(50);
        messages = await queue.receive(10);
      }
      release();
      if (messages.length === 0) continue;
      const result = await handler(event(messages), context);
      const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
      for (const m of messages) if (!failed.has(m.messageId)) await queue.delete(m.receiptHandle);
    }
  };
  const loops = Array.from({ length: concurrency }, pump);

  return {
    system,
    async start(body) {
      const response = await app.request("/v1/tasks", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as { task_id?: string };
      if (response.status !== 202 || !answer.task_id) throw new Error(JSON.stringify(answer));
      return answer.task_id;
    },
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/**
 * The local stand-in for Lambda's SQS event source mapping: long-polls a queue,
 * hands each batch to a Lambda handler as a real `SQSEvent`, deletes the records
 * that succeeded and leaves the rest to reappear after the visibility timeout,
 * exactly as Lambda does with `ReportBatchItemFailures` on.
 */
import { randomUUID } from "node:crypto";
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { Context, SQSEvent, SQSMessageAttributes, SQSRecord } from "aws-lambda";

/** A Lambda handler of SQS events; it may return `{ batchItemFailures }`. */
export type SqsEventHandler = (event: SQSEvent, context: Context) => unknown;

export interface PollerOptions {
  sqs: SQSClient;
  queueUrl: string;
  handler: SqsEventHandler;
  /** Batches in flight at most (Lambda's maximum concurrency of the mapping). */
  concurrency: number;
  /** Messages per batch, 1 to 10 (default 10). */
  batchSize?: number;
  /** Long-poll wait, 0 to 20 seconds (default 1). */
  waitTimeSeconds?: number;
  /** The function name the context reports (default "worker"). */
  functionName?: string;
  /** What `context.getRemainingTimeInMillis()` counts down from (default 60 s); nothing is killed. */
  timeoutMs?: number;
  /**
   * The queue's visibility timeout, in seconds: when given, the poller keeps the
   * messages of a batch in flight hidden while the handler runs (it extends their
   * visibility every third of it), so that the queue can use a short timeout and
   * hand out again within seconds what a killed process had in flight, without a
   * slow step being handed out twice.
   */
  visibilityTimeoutSeconds?: number;
  /**
   * Receipt handles of messages whose visibility the handler set itself (a retry
   * after a delay, a wake that hides until due): the poller stops extending
   * them, so that their delay holds. The handler's side adds to it.
   */
  retimed?: Set<string>;
  /** Told of failed receives, handler errors, failed deletes and failed extensions (default: console.error). */
  onError?: (error: unknown, during: "receive" | "handler" | "delete" | "visibility") => void;
}

export interface Poller {
  /**
   * Stops polling at once (aborting the long polls) and waits for the batches in
   * flight, for at most `graceMs` when given: past it, the batches still running
   * are left (their visibility no longer extended), and their messages come
   * back to the queue when it runs out, as after a crash; the steps are made to
   * be run again.
   */
  stop(graceMs?: number): Promise<void>;
}

/** After a failed receive (emulator restarting, network), wait before the next. */
const RECEIVE_BACKOFF_MS = 1_000;

/**
 * Starts `concurrency` polling loops, each handling one batch at a time, of which
 * one at a time receives: the others wait their turn while it long-polls. With
 * every loop long-polling at once, each message woke them all (the emulator
 * answers every waiting poll when one arrives) and all but one came back empty
 * to poll again: eight receives per step at a concurrency of eight, a third of
 * the local stack's CPU. One receiver at a time keeps it near one receive per
 * batch, and a busy loop still hands the turn on as soon as its batch arrives. Order
 * within a FIFO message group holds because SQS does not hand out a group's next
 * message while one of it is in flight; within a batch the handler sees a
 * group's records in order, and (as on Lambda) a FIFO handler must report every
 * record after a failed one of the same group as failed too.
 *
 * @example
 * const poller = startPoller({ sqs: clients.sqs, queueUrl, handler: workerHandler, concurrency: 4 });
 * // ...
 * await poller.stop();
 */
export function startPoller(options: PollerOptions): Poller {
  const batchSize = options.batchSize ?? 10;
  const waitTimeSeconds = options.waitTimeSeconds ?? 1;
  check("concurrency", options.concurrency, 1, 1_000);
  check("batchSize", batchSize, 1, 10);
  check("waitTimeSeconds", waitTimeSeconds, 0, 20);
  if (options.visibilityTimeoutSeconds !== undefined) {
    check("visibilityTimeoutSeconds", options.visibilityTimeoutSeconds, 1, 43_200);
  }
  const onError =
    options.onError ??
    ((error, during) => console.error(`poller of ${options.queueUrl}: ${during} failed`, error));
  const functionName = options.functionName ?? "worker";
  const timeoutMs = options.timeoutMs ?? 60_000;
  const { sqs, queueUrl } = options;

  const abort = new AbortController();
  let queueArn: Promise<string> | undefined;
  const arn = () => {
    queueArn ??= sqs
      .send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }))
      .then((out) => out.Attributes?.QueueArn ?? "")
      .catch((error: unknown) => {
        queueArn = undefined;
        throw error;
      });
    return queueArn;
  };

  // The turn to receive: a chain of promises, one link per loop waiting for it.
  let turn: Promise<void> = Promise.resolve();
  const takeTurn = async (): Promise<() => void> => {
    let release!: () => void;
    const previous = turn;
    turn = new Promise((resolve) => {
      release = resolve;
    });
    await previous;
    return release;
  };

  async function loop(): Promise<void> {
    while (!abort.signal.aborted) {
      let messages: Message[];
      let eventSourceARN: string;
      const release = await takeTurn();
      if (abort.signal.aborted) {
        release();
        return;
      }
      try {
        eventSourceARN = await arn();
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: batchSize,
            WaitTimeSeconds: waitTimeSeconds,
            MessageSystemAttributeNames: ["All"],
            MessageAttributeNames: ["All"],
          }),
          { abortSignal: abort.signal },
        );
        messages = out.Messages ?? [];
      } catch (error) {
        if (abort.signal.aborted) {
          release();
          return;
        }
        onError(error, "receive");
        await sleep(RECEIVE_BACKOFF_MS, abort.signal);
        release();
        continue;
      }
      release();
      // A batch that arrived is handled even when stop() came meanwhile: its
      // messages are ours until their visibility timeout.
      if (messages.length > 0) await handle(messages, eventSourceARN);
    }
  }

  async function handle(messages: Message[], eventSourceARN: string): Promise<void> {
    const region = eventSourceARN.split(":")[3] ?? "us-east-1";
    const event: SQSEvent = { Records: messages.map((m) => toRecord(m, eventSourceARN, region)) };
    let failed: Set<string> | "all";
    const keepHidden = hideWhileHandled(messages);
    hidden.add(keepHidden);
    try {
      const result = await options.handler(event, lambdaContext(functionName, region, timeoutMs));
      failed = failures(result, event);
    } catch (error) {
      onError(error, "handler");
      failed = "all";
    } finally {
      keepHidden.stop();
      hidden.delete(keepHidden);
    }
    if (failed === "all") return;
    const done = event.Records.filter((r) => !failed.has(r.messageId));
    if (done.length === 0) return;
    try {
      const out = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
        }),
      );
      for (const entry of out.Failed ?? []) {
        onError(
          new Error(`delete of a handled message failed: ${entry.Code} ${entry.Message}`),
          "delete",
        );
      }
    } catch (error) {
      onError(error, "delete");
    }
  }

  /** Extends the batch's visibility every third of the timeout until stopped. */
  function hideWhileHandled(messages: Message[]): { stop(): void } {
    const seconds = options.visibilityTimeoutSeconds;
    if (seconds === undefined) return { stop() {} };
    const retimed = options.retimed;
    const timer = setInterval(
      () => {
        const entries = messages
          .filter((m) => !retimed?.has(m.ReceiptHandle ?? ""))
          .map((m, i) => ({
            Id: String(i),
            ReceiptHandle: m.ReceiptHandle ?? "",
            VisibilityTimeout: seconds,
          }));
        if (entries.length === 0) return;
        sqs
          .send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: queueUrl, Entries: entries }))
          .catch((error: unknown) => onError(error, "visibility"));
      },
      (seconds * 1000) / 3,
    );
    timer.unref();
    return {
      stop: () => {
        clearInterval(timer);
        for (const m of messages) retimed?.delete(m.ReceiptHandle ?? "");
      },
    };
  }

  /** The visibility extensions of the batches in flight. */
  const hidden = new Set<{ stop(): void }>();
  const loops = Array.from({ length: options.concurrency }, () => loop());
  return {
    async stop(graceMs?: number) {
      abort.abort();
      const all = Promise.all(loops);
      if (graceMs === undefined) return void (await all);
      let timer: NodeJS.Timeout | undefined;
      const expired = await Promise.race([
        all.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), graceMs);
        }),
      ]);
      clearTimeout(timer);
      if (expired) for (const keepHidden of hidden) keepHidden.stop();
    },
  };
}

/**
 * The records to keep, as Lambda reads the handler's answer: nothing or no
 * `batchItemFailures` means all succeeded; an identifier that is empty or not
 * in the batch fails the whole batch.
 */
function failures(result: unknown, event: SQSEvent): Set<string> | "all" {
  const list = (result as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures;
  if (list === undefined || list === null) return new Set();
  if (!Array.isArray(list)) return "all";
  const ids = new Set(event.Records.map((r) => r.messageId));
  const failed = new Set<string>();
  for (const entry of list) {
    const id = (entry as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof id !== "string" || !ids.has(id)) return "all";
    failed.add(id);
  }
  return failed;
}

function toRecord(message: Message, eventSourceARN: string, awsRegion: string): SQSRecord {
  const a = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? "",
    receiptHandle: message.ReceiptHandle ?? "",
    body: message.Body ?? "",
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? "1",
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? "000000000000",
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(a.MessageGroupId ? { MessageGroupId: a.MessageGroupId } : {}),
      ...(a.MessageDeduplicationId ? { MessageDeduplicationId: a.MessageDeduplicationId } : {}),
      ...(a.SequenceNumber ? { SequenceNumber: a.SequenceNumber } : {}),
    },
    messageAttributes: messageAttributes(message),
    md5OfBody: message.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN,
    awsRegion,
  };
}

/** SQS's attribute shape (`StringValue`) in Lambda's spelling (`stringValue`). */
function messageAttributes(message: Message): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    out[name] = {
      dataType: value.DataType ?? "String",
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined
        ? { binaryValue: Buffer.from(value.BinaryValue).toString("base64") }
        : {}),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((b) =>
        Buffer.from(b).toString("base64"),
      ),
    };
  }
  return out;
}

function lambdaContext(functionName: string, region: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  const unsupported = () => {
    throw new Error("callback-style Lambda handlers are not supported: return a promise");
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${functionName}`,
    memoryLimitInMB: "1024",
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "local",
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

function check(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(
      `startPoller: '${name}' must be a whole number from ${min} to ${max}, got ${value}`,
    );
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

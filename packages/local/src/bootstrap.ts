/**
 * Creates what the local stack needs in the emulators, each only when missing,
 * so that a restart on the same data folder finds and keeps its state: the
 * table (from the one table definition), the FIFO queue with its FIFO
 * dead-letter queue, and the bucket.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, HeadBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { createTableInput, tableDefinition } from "@stackvm/aws";

export interface BootstrapNames {
  table: string;
  /** The step queue; `.fifo` is added when missing. */
  queue: string;
  /** Its dead-letter queue; `.fifo` is added when missing. */
  dlq: string;
  bucket: string;
}

export interface BootstrapOptions {
  /** Seconds a received message stays hidden (default 60; at least the worker's timeout). */
  visibilityTimeoutSeconds?: number;
  /** Receives after which a message goes to the DLQ (default 5). */
  maxReceiveCount?: number;
  /** How long to wait for the table to become ACTIVE (default 30 s). */
  tableTimeoutMs?: number;
}

export interface BootstrapResult {
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  dlqArn: string;
}

/** DLQ messages are kept for SQS's maximum, 14 days. */
const DLQ_RETENTION_SECONDS = 14 * 24 * 60 * 60;

/**
 * Makes sure the table, the queues and the bucket exist; idempotent. Queue
 * attributes that can change (visibility, redrive) are set on every run, so
 * that a changed setting takes effect on restart.
 *
 * @example
 * const { queueUrl } = await bootstrap(clients, { table: "stackvm", queue: "steps", dlq: "steps-dlq", bucket: "stackvm-blobs" });
 */
export async function bootstrap(
  clients: { dynamodb: DynamoDBClient; sqs: SQSClient; s3: S3Client },
  names: BootstrapNames,
  options: BootstrapOptions = {},
): Promise<BootstrapResult> {
  await ensureTable(clients.dynamodb, names.table, options.tableTimeoutMs ?? 30_000);
  const dlq = await ensureQueue(clients.sqs, fifo(names.dlq), {
    MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS),
  });
  const queue = await ensureQueue(clients.sqs, fifo(names.queue), {
    VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 60),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: dlq.arn,
      maxReceiveCount: options.maxReceiveCount ?? 5,
    }),
  });
  await ensureBucket(clients.s3, names.bucket);
  return { queueUrl: queue.url, queueArn: queue.arn, dlqUrl: dlq.url, dlqArn: dlq.arn };
}

async function ensureTable(dynamodb: DynamoDBClient, table: string, timeoutMs: number) {
  try {
    await dynamodb.send(new DescribeTableCommand({ TableName: table }));
  } catch (error) {
    if (nameOf(error) !== "ResourceNotFoundException") throw error;
    try {
      await dynamodb.send(new CreateTableCommand(createTableInput(table)));
    } catch (createError) {
      // Another process created it in between.
      if (nameOf(createError) !== "ResourceInUseException") throw createError;
    }
  }
  await waitUntilActive(dynamodb, table, timeoutMs);
  await enableTtl(dynamodb, table);
}

async function waitUntilActive(dynamodb: DynamoDBClient, table: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
    const indexes = Table?.GlobalSecondaryIndexes ?? [];
    if (Table?.TableStatus === "ACTIVE" && indexes.every((i) => i.IndexStatus === "ACTIVE")) return;
    if (Date.now() > deadline) {
      throw new Error(`table ${table} is not ACTIVE after ${timeoutMs} ms (${Table?.TableStatus})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Turns on TTL; dynalite lacks UpdateTimeToLive, and reads filter expired records anyway. */
async function enableTtl(dynamodb: DynamoDBClient, table: string) {
  try {
    const { TimeToLiveDescription } = await dynamodb.send(
      new DescribeTimeToLiveCommand({ TableName: table }),
    );
    const status = TimeToLiveDescription?.TimeToLiveStatus;
    if (status === "ENABLED" || status === "ENABLING") return;
    await dynamodb.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { Enabled: true, AttributeName: tableDefinition.ttlAttribute },
      }),
    );
  } catch (error) {
    if (nameOf(error) !== "UnknownOperationException") throw error;
  }
}

async function ensureQueue(
  sqs: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<{ url: string; arn: string }> {
  let url: string | undefined;
  try {
    url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  } catch (error) {
    if (!isMissingQueue(error)) throw error;
  }
  if (url === undefined) {
    const created = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: { FifoQueue: "true", ContentBasedDeduplication: "false", ...attributes },
      }),
    );
    url = created.QueueUrl!;
  } else {
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: attributes }));
  }
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }),
  );
  return { url, arn: Attributes?.QueueArn ?? "" };
}

async function ensureBucket(s3: S3Client, bucket: string) {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    return;
  } catch (error) {
    if (nameOf(error) !== "NotFound" && nameOf(error) !== "NoSuchBucket") throw error;
  }
  const region = await s3.config.region();
  try {
    await s3.send(
      new CreateBucketCommand({
        Bucket: bucket,
        // us-east-1 is the one region that refuses an explicit location.
        ...(region === "us-east-1"
          ? {}
          : { CreateBucketConfiguration: { LocationConstraint: region as never } }),
      }),
    );
  } catch (error) {
    if (nameOf(error) !== "BucketAlreadyOwnedByYou") throw error;
  }
}

function fifo(name: string): string {
  return name.endsWith(".fifo") ? name : `${name}.fifo`;
}

function isMissingQueue(error: unknown): boolean {
  const name = nameOf(error);
  return name === "QueueDoesNotExist" || name === "AWS.SimpleQueueService.NonExistentQueue";
}

function nameOf(error: unknown): unknown {
  return (error as { name?: unknown } | null)?.name;
}

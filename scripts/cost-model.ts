/**
 * What a number of steps costs on AWS, from the work one step does (measured by
 * `npm run bench`) and AWS's list prices. Used by `scripts/cost.ts`.
 *
 * Left out on purpose: the LLM's own bill (it depends on the model and the
 * prompts; every commit records it), the free tiers, data transfer, and the
 * fixed monthly costs that do not grow with steps (the sweep every five
 * minutes, the queue pollers' empty receives).
 */

/**
 * AWS list prices, us-east-1, on-demand, as published on the AWS pricing
 * pages in 2025 (DynamoDB's on-demand prices are those after the November
 * 2024 cut). Check them against https://aws.amazon.com/pricing/ before
 * quoting a number.
 */
export const prices = {
  asOf: "2025, us-east-1 list prices",
  /** Lambda on Graviton (arm64), first tier, per GB-second. */
  lambdaArmGbSecond: 0.0000133334,
  /** Lambda, per request. */
  lambdaRequest: 0.2 / 1e6,
  /** SQS FIFO, per request (each 64 KiB of payload is one request). */
  sqsFifoRequest: 0.5 / 1e6,
  /** DynamoDB on-demand, per write request unit (1 KB). */
  dynamoWriteUnit: 0.625 / 1e6,
  /** DynamoDB on-demand, per read request unit (4 KB, strongly consistent). */
  dynamoReadUnit: 0.125 / 1e6,
  /** DynamoDB Standard table class, per GB-month stored. */
  dynamoGbMonth: 0.25,
  /** S3 Standard, per PUT (also COPY, POST, LIST). */
  s3Put: 0.005 / 1000,
  /** S3 Standard, per GET. */
  s3Get: 0.0004 / 1000,
  /** CloudWatch Logs, per GB ingested (standard class). */
  logsGbIngested: 0.5,
} as const;

/** The work one step does, in the shape `npm run bench` writes to `.stackvm/bench.json`. */
export interface StepCounts {
  dynamodb: {
    reads_per_step: number;
    writes_per_step: number;
    bytes_written_per_step: number;
    /**
     * Size of the branch item (DynamoDB's count) that the step reads and updates:
     * DynamoDB bills an UpdateItem by the whole item, not by what it changes, and a
     * GetItem by the whole item too. 0 when not measured: writes are then priced by
     * the bytes sent, reads as one unit.
     */
    branch_item_bytes?: number;
    /** Size of the commit item the step puts. */
    commit_item_bytes?: number;
    /**
     * Mean write units of a head move over a task's steps (each billed by the
     * larger of the branch item before and after, in whole KB), measured by the
     * bench from the branch item as it grew. Preferred to `branch_item_bytes`,
     * the item at the task's end (its largest). 0 when not measured.
     */
    head_move_write_units?: number;
    /** Mean read units of a step's read of its branch (whole 4 KB units). 0 when not measured. */
    branch_read_units?: number;
  };
  sqs: { requests_per_step: number };
  s3: { puts_per_step: number; gets_per_step: number };
  lambda: { worker_ms_per_step: number; memory_mb: number };
  /** Not measured by the bench; bytes of log lines one step writes. */
  logs?: { bytes_per_step: number };
}

/**
 * Used when `.stackvm/bench.json` is absent: the design's budget for the common
 * path (one read and two writes; send, receive and delete of one message), a
 * commit of about 1.5 KB, no blob, and the worker's 1024 MB for 150 ms of CPU.
 */
export const defaultCounts: Required<StepCounts> = {
  dynamodb: {
    reads_per_step: 1,
    writes_per_step: 2,
    bytes_written_per_step: 1536,
    branch_item_bytes: 0,
    commit_item_bytes: 0,
    head_move_write_units: 0,
    branch_read_units: 0,
  },
  sqs: { requests_per_step: 3 },
  s3: { puts_per_step: 0, gets_per_step: 0 },
  lambda: { worker_ms_per_step: 150, memory_mb: 1024 },
  logs: { bytes_per_step: 1500 },
};

/** One line of the bill. */
export interface CostLine {
  item: string;
  quantity: number;
  unit: string;
  unitPrice: number;
  cost: number;
}

const GB = 1024 ** 3;

/**
 * The bill for `steps` steps, one line per priced quantity.
 *
 * DynamoDB: with the item sizes measured, the commit's put costs its size in
 * whole KB and each other write (the head move, an UpdateItem) the branch item's
 * whole size in KB, as DynamoDB bills it, and each strongly consistent read the
 * branch item's size in whole 4 KB units (a projection does not lower it). The
 * mean units over a task's head moves and reads, when measured, stand for the
 * branch item's size (the size at the task's end overstates the early steps).
 * Without sizes, each write costs the step's average bytes sent rounded up to
 * whole KB, and each read one unit. Storage: the commit each step leaves (with
 * DynamoDB's 100 bytes of overhead per item), or without sizes the bytes sent.
 * Lambda: one worker invocation per step (steps of one branch are sequential),
 * billed for the measured duration; time spent waiting on the LLM is billed too
 * and is not in the bench.
 */
export function costOf(counts: Required<StepCounts>, steps: number): CostLine[] {
  const { dynamodb, sqs, s3, lambda, logs } = counts;
  const itemKb =
    dynamodb.writes_per_step > 0
      ? Math.max(1, Math.ceil(dynamodb.bytes_written_per_step / dynamodb.writes_per_step / 1024))
      : 0;
  const branchBytes = dynamodb.branch_item_bytes ?? 0;
  const commitBytes = dynamodb.commit_item_bytes ?? 0;
  const sized = branchBytes > 0 && commitBytes > 0 && dynamodb.writes_per_step >= 1;
  const units = (bytes: number, per: number) => Math.max(1, Math.ceil(bytes / per));
  const moveUnits = dynamodb.head_move_write_units || units(branchBytes, 1024);
  const branchReadUnits = dynamodb.branch_read_units || units(branchBytes, 4096);
  const writeUnits = sized
    ? units(commitBytes, 1024) + (dynamodb.writes_per_step - 1) * moveUnits
    : dynamodb.writes_per_step * itemKb;
  const readUnits = sized ? dynamodb.reads_per_step * branchReadUnits : dynamodb.reads_per_step;
  // What a step leaves stored: its commit (plus the 100 bytes DynamoDB counts per
  // item); the branch item is rewritten in place. Without sizes, the bytes sent.
  const storedBytes = commitBytes > 0 ? commitBytes + 100 : dynamodb.bytes_written_per_step;
  const gbSeconds = (lambda.worker_ms_per_step / 1000) * (lambda.memory_mb / 1024);
  const line = (item: string, perStep: number, unit: string, unitPrice: number): CostLine => ({
    item,
    quantity: perStep * steps,
    unit,
    unitPrice,
    cost: perStep * steps * unitPrice,
  });
  return [
    line("Lambda duration (arm64)", gbSeconds, "GB-s", prices.lambdaArmGbSecond),
    line("Lambda requests", 1, "requests", prices.lambdaRequest),
    line("SQS FIFO requests", sqs.requests_per_step, "requests", prices.sqsFifoRequest),
    line("DynamoDB reads", readUnits, "RRU", prices.dynamoReadUnit),
    line("DynamoDB writes", writeUnits, "WRU", prices.dynamoWriteUnit),
    line("S3 PUT", s3.puts_per_step, "requests", prices.s3Put),
    line("S3 GET", s3.gets_per_step, "requests", prices.s3Get),
    line("CloudWatch Logs ingested", logs.bytes_per_step / GB, "GB", prices.logsGbIngested),
    line("DynamoDB storage, one month", storedBytes / GB, "GB-month", prices.dynamoGbMonth),
  ];
}

/**
 * Reads the bench's JSON: every number present must be finite and not
 * negative; what is absent takes its default. Returns the counts and the
 * names of the fields that were defaulted.
 */
export function parseCounts(json: unknown): { counts: Required<StepCounts>; defaulted: string[] } {
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new Error(
      "bench.json must be an object like { dynamodb: { reads_per_step, ... }, sqs: {...}, s3: {...}, lambda: {...} }",
    );
  }
  const source = json as Record<string, Record<string, unknown> | undefined>;
  const defaulted: string[] = [];
  const counts = structuredClone(defaultCounts) as Record<string, Record<string, number>>;
  for (const [group, fields] of Object.entries(counts)) {
    for (const field of Object.keys(fields)) {
      const value = source[group]?.[field];
      if (value === undefined) {
        defaulted.push(`${group}.${field}`);
      } else if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
        throw new Error(
          `bench.json: ${group}.${field} must be a number of 0 or more, got ${JSON.stringify(value)}`,
        );
      } else {
        fields[field] = value;
      }
    }
  }
  return { counts: counts as unknown as Required<StepCounts>, defaulted };
}

/**
 * Knowledge on AWS: storage of the index and the originals on S3, and searches.
 * LanceDB keeps each chunk as its vector (float32), its text and its graph JSON
 * in Lance files under the bucket, plus an IVF-PQ index about 1/16 of the
 * vectors; a search is one worker invocation's share (the step that searches)
 * plus S3 GETs: the table's latest manifest, the index's centroids and the
 * probed partitions, and the refined rows (ranges coalesced by LanceDB).
 */
export interface KnowledgeCounts {
  chunks: number;
  /** Vector size: 1536 for text-embedding-3-small. */
  dimensions: number;
  /** Characters of text and graph JSON kept per chunk (the chunker cuts at 1,200). */
  bytes_per_chunk: number;
  /** The uploaded originals, per chunk they give. */
  original_bytes_per_chunk: number;
  queries: number;
  /** S3 GETs one search makes (manifest, centroids, 20 probed partitions, refined rows). */
  gets_per_query: number;
  /** Worker time of one search beyond an ordinary step (p50 on the S3 emulator: npm run bench:knowledge). */
  query_ms: number;
  memory_mb: number;
}

export const defaultKnowledgeCounts: KnowledgeCounts = {
  chunks: 100_000,
  dimensions: 1536,
  bytes_per_chunk: 2_000,
  original_bytes_per_chunk: 1_500,
  queries: 1_000_000,
  gets_per_query: 30,
  query_ms: 60,
  memory_mb: 1024,
};

/** S3 Standard, per GB-month stored. */
export const s3GbMonth = 0.023;

/** A month of knowledge: what its storage and its searches cost (embeddings and LLM calls not included). */
export function knowledgeCostOf(k: KnowledgeCounts): CostLine[] {
  const indexBytes = k.chunks * (k.dimensions * 4 * (1 + 1 / 16) + k.bytes_per_chunk);
  const line = (item: string, quantity: number, unit: string, unitPrice: number): CostLine => ({
    item,
    quantity,
    unit,
    unitPrice,
    cost: quantity * unitPrice,
  });
  return [
    line("S3 storage: index (vectors, text, IVF-PQ)", indexBytes / GB, "GB-month", s3GbMonth),
    line(
      "S3 storage: originals",
      (k.chunks * k.original_bytes_per_chunk) / GB,
      "GB-month",
      s3GbMonth,
    ),
    line("S3 GET, searches", k.queries * k.gets_per_query, "requests", prices.s3Get),
    line(
      "Lambda duration of searches (arm64)",
      k.queries * (k.query_ms / 1000) * (k.memory_mb / 1024),
      "GB-s",
      prices.lambdaArmGbSecond,
    ),
  ];
}

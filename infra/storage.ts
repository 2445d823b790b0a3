/**
 * Where state lives: the one DynamoDB table and the blob bucket.
 *
 * The table is built from `tableDefinition`, the same object the local stack's
 * bootstrap turns into a `CreateTable` call, so the emulator and AWS cannot drift
 * apart. It is imported by relative path because SST bundles `sst.config.ts`
 * and its imports itself: the file has no dependencies, and a relative import
 * is always bundled, whatever SST leaves external.
 */
import { tableDefinition } from "../packages/aws/src/table-definition";

const fieldTypes = { S: "string", N: "number", B: "binary" } as const;

const isProd = $app.stage === "prod";

/** Tasks, branches, commits, namespaces, keys, triggers, schedules: one table. */
export const table = new sst.aws.Dynamo("Table", {
  fields: Object.fromEntries(tableDefinition.attributes.map((a) => [a.name, fieldTypes[a.type]])),
  primaryIndex: { hashKey: tableDefinition.hashKey, rangeKey: tableDefinition.rangeKey },
  globalIndexes: Object.fromEntries(
    tableDefinition.globalIndexes.map((index) => [
      index.name,
      { hashKey: index.hashKey, rangeKey: index.rangeKey, projection: index.projection },
    ]),
  ),
  ttl: tableDefinition.ttlAttribute,
  // The history of every task is the product: a production table survives a
  // mistaken `sst remove` and can be restored to any second of the last 35 days.
  deletionProtection: isProd,
  transform: {
    table: (args) => {
      args.billingMode = tableDefinition.billingMode;
      args.pointInTimeRecovery = { enabled: isProd };
      return undefined;
    },
  },
});

/** Key prefix of objects that are only needed for a while; S3 deletes them after a day. */
export const temporaryPrefix = "tmp/";

/** Key prefix of the LLM calls' traces (`llmTracePrefix` in @stackvm/core): `llm/{tenant}/{task}/`. */
export const llmTracePrefix = "llm/";

/**
 * Days each LLM call's prompt and answer are kept: `STACKVM_LLM_TRACE_RETENTION_DAYS`
 * when deploying (default 30; 0 keeps none). The bucket deletes older traces, and
 * the API answers 404 for one past the retention before S3 gets to it.
 */
export const llmTraceRetentionDays = traceDays(process.env.STACKVM_LLM_TRACE_RETENTION_DAYS);

function traceDays(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 30;
  const days = Number(raw);
  if (!Number.isInteger(days) || days < 0 || days > 3650) {
    throw new Error(
      `STACKVM_LLM_TRACE_RETENTION_DAYS must be a whole number of days from 0 (keep no traces) to 3650, got '${raw}'`,
    );
  }
  return days;
}

/** What the worker (which writes traces) and the API (which reads them) are told of the retention. */
export const llmTraceEnvironment = {
  STACKVM_LLM_TRACE_RETENTION_DAYS: String(llmTraceRetentionDays),
};

/** Values over 64 KiB (content-addressed), artifacts, files made in the sandbox. Private. */
export const bucket = new sst.aws.Bucket("Blobs", {
  lifecycle: [
    { id: "temporary", prefix: temporaryPrefix, expiresIn: "1 day" },
    // With 0 days no trace is written; the rule still clears those of an earlier setting.
    {
      id: "llm-traces",
      prefix: llmTracePrefix,
      expiresIn: `${Math.max(llmTraceRetentionDays, 1)} days`,
    },
  ],
});

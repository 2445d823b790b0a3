/**
 * The one DynamoDB table, defined once: `infra/storage.ts` builds the AWS table
 * from this and the local stack's bootstrap creates the emulator's table from it.
 *
 * Layout (single table, string keys):
 * - `pk`/`sk`: every item. Tenant-owned keys start with `T#{tenant}`.
 * - `gsi1pk`/`gsi1sk`: the one secondary index (task listing newest first,
 *   schedules by due time, running branches for the sweep). It projects keys
 *   only, so that the many updates of an item in the index that do not touch its
 *   index keys (a running branch's head moves) cost no index writes; the store
 *   adapter reads the items of an index page in one batch.
 * - `ttl`: epoch seconds; expiring records (idempotency keys, webhook ids) carry it.
 */
export const tableDefinition = {
  hashKey: "pk",
  rangeKey: "sk",
  attributes: [
    { name: "pk", type: "S" },
    { name: "sk", type: "S" },
    { name: "gsi1pk", type: "S" },
    { name: "gsi1sk", type: "S" },
  ],
  globalIndexes: [{ name: "gsi1", hashKey: "gsi1pk", rangeKey: "gsi1sk", projection: "keys-only" }],
  ttlAttribute: "ttl",
  billingMode: "PAY_PER_REQUEST",
} as const;

/** The same definition as a `CreateTable` input for the DynamoDB API. */
export function createTableInput(tableName: string) {
  return {
    TableName: tableName,
    BillingMode: tableDefinition.billingMode,
    KeySchema: [
      { AttributeName: tableDefinition.hashKey, KeyType: "HASH" as const },
      { AttributeName: tableDefinition.rangeKey, KeyType: "RANGE" as const },
    ],
    AttributeDefinitions: tableDefinition.attributes.map((a) => ({
      AttributeName: a.name,
      AttributeType: a.type,
    })),
    GlobalSecondaryIndexes: tableDefinition.globalIndexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.hashKey, KeyType: "HASH" as const },
        { AttributeName: index.rangeKey, KeyType: "RANGE" as const },
      ],
      Projection: { ProjectionType: "KEYS_ONLY" as const },
    })),
  };
}

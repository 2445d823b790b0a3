import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { DynamoItemStore } from "./dynamo-item-store";

// The behaviour against DynamoDB is in test/conformance (dynalite and DynamoDB
// Local); these tests check what the emulators cannot show: the exact
// requests, the chunking and the retries of unprocessed keys.

interface Sent {
  name: string;
  input: Record<string, unknown>;
}

/** A document client that records commands and answers from `answer`. */
function fakeDoc(answer: (sent: Sent, calls: Sent[]) => unknown = () => ({})) {
  const calls: Sent[] = [];
  const doc = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const sent = { name: command.constructor.name, input: command.input };
      calls.push(sent);
      const out = answer(sent, calls);
      if (out instanceof Error) throw out;
      return out;
    },
  };
  return { doc: doc as unknown as DynamoDBDocumentClient, calls };
}

const keys = (n: number) => [...Array(n).keys()].map((i) => ({ pk: "p", sk: String(i) }));

describe("DynamoItemStore", () => {
  it("puts every name and value behind a placeholder", async () => {
    const { doc, calls } = fakeDoc(() => ({ Attributes: { pk: "p", sk: "s" } }));
    await new DynamoItemStore(doc, "table").update(
      { pk: "p", sk: "s" },
      {
        set: [
          [["status"], "running"],
          [["vars", "a.b"], 1],
        ],
        add: [[["usage", "steps"], 1]],
        remove: [["name"]],
      },
      { equals: { status: "queued", head: null }, below: { seq: 3 } },
    );
    const input = calls[0]!.input;
    expect(input.UpdateExpression).toBe(
      "SET #n0 = :v0, #n1.#n2 = :v1, #n3.#n4 = if_not_exists(#n3.#n4, :v2) + :v3 REMOVE #n5",
    );
    expect(input.ConditionExpression).toBe(
      "#n0 = :v4 AND (attribute_not_exists(#n6) OR attribute_type(#n6, :v5)) AND (attribute_not_exists(#n7) OR #n7 < :v6)",
    );
    expect(input.ExpressionAttributeNames).toEqual({
      "#n0": "status",
      "#n1": "vars",
      "#n2": "a.b",
      "#n3": "usage",
      "#n4": "steps",
      "#n5": "name",
      "#n6": "head",
      "#n7": "seq",
    });
    expect(input.ExpressionAttributeValues).toEqual({
      ":v0": "running",
      ":v1": 1,
      ":v2": 0,
      ":v3": 1,
      ":v4": "queued",
      ":v5": "NULL",
      ":v6": 3,
    });
    expect(input.ReturnValues).toBe("ALL_NEW");
  });

  it("writes exists: false with orExpiredBefore as one condition on the key and the ttl", async () => {
    const { doc, calls } = fakeDoc();
    await new DynamoItemStore(doc, "table").put(
      { pk: "p", sk: "s" },
      { exists: false, orExpiredBefore: 99 },
    );
    expect(calls[0]!.input).toMatchObject({
      ConditionExpression: "(attribute_not_exists(#n0) OR #n1 < :v0)",
      ExpressionAttributeNames: { "#n0": "pk", "#n1": "ttl" },
      ExpressionAttributeValues: { ":v0": 99 },
    });
  });

  it("turns a failed condition into a ConflictError and rethrows other errors", async () => {
    const failed = Object.assign(new Error("The conditional request failed"), {
      name: "ConditionalCheckFailedException",
    });
    const conflict = await new DynamoItemStore(fakeDoc(() => failed).doc, "t")
      .delete({ pk: "p", sk: "s" }, { exists: true })
      .catch((e: unknown) => e);
    expect(conflict).toMatchObject({ kind: "conflict", code: "condition_failed", cause: failed });
    const other = Object.assign(new Error("throttled"), { name: "ThrottlingException" });
    const rethrown = await new DynamoItemStore(fakeDoc(() => other).doc, "t")
      .put({ pk: "p", sk: "s" })
      .catch((e: unknown) => e);
    expect(rethrown).toBe(other);
  });

  it("reads in chunks of 100 and retries unprocessed keys", async () => {
    const { doc, calls } = fakeDoc((sent, all) => {
      const request = (sent.input.RequestItems as Record<string, { Keys: { sk: string }[] }>).t!;
      // The first call of all leaves its last key unprocessed.
      const [processed, unprocessed] =
        all.length === 1 ? [request.Keys.slice(0, -1), request.Keys.slice(-1)] : [request.Keys, []];
      return {
        Responses: { t: processed.map((k) => ({ pk: "p", sk: k.sk })) },
        UnprocessedKeys: unprocessed.length > 0 ? { t: { Keys: unprocessed } } : {},
      };
    });
    const store = new DynamoItemStore(doc, "t", { batchBackoffMs: 0 });
    const items = await store.batchGet([...keys(250), { pk: "p", sk: "0" }]);
    expect(items.map((i) => Number(i.sk)).sort((a, b) => a - b)).toEqual([...Array(250).keys()]);
    const sizes = calls.map(
      (c) => (c.input.RequestItems as Record<string, { Keys: unknown[] }>).t!.Keys.length,
    );
    expect(sizes.slice(0, 3).sort((a, b) => a - b)).toEqual([50, 100, 100]);
    expect(sizes.slice(3)).toEqual([1]);
    expect(
      calls.every(
        (c) =>
          (c.input.RequestItems as Record<string, { ConsistentRead: boolean }>).t!.ConsistentRead,
      ),
    ).toBe(true);
  });

  it("gives up on keys that stay unprocessed with a retryable error", async () => {
    const { doc, calls } = fakeDoc((sent) => ({
      UnprocessedKeys: sent.input.RequestItems,
    }));
    const error = await new DynamoItemStore(doc, "t", { batchAttempts: 3, batchBackoffMs: 0 })
      .batchGet(keys(2))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "retryable", code: "store_throttled" });
    expect(calls).toHaveLength(3);
  });

  it("deletes in chunks of 25 and retries unprocessed items", async () => {
    let first = true;
    const { doc, calls } = fakeDoc((sent) => {
      const requests = (sent.input.RequestItems as Record<string, unknown[]>).t!;
      if (first) {
        first = false;
        return { UnprocessedItems: { t: requests.slice(0, 2) } };
      }
      return {};
    });
    await new DynamoItemStore(doc, "t", { batchBackoffMs: 0 }).deleteMany(keys(60));
    const sizes = calls.map((c) => (c.input.RequestItems as Record<string, unknown[]>).t!.length);
    expect(sizes.slice(0, 3).sort((a, b) => a - b)).toEqual([10, 25, 25]);
    expect(sizes.slice(3)).toEqual([2]);
    expect(calls.every((c) => c.name === "BatchWriteCommand")).toBe(true);
  });

  it("makes no call for empty batches", async () => {
    const { doc, calls } = fakeDoc();
    const store = new DynamoItemStore(doc, "t");
    expect(await store.batchGet([])).toEqual([]);
    await store.deleteMany([]);
    expect(calls).toEqual([]);
  });

  it("resumes inside a page from the last item kept, not from DynamoDB's last key", async () => {
    const { doc, calls } = fakeDoc(() => ({
      Items: [1, 2, 3, 4].map((i) => ({ pk: "p", sk: `s${i}`, kind: "x" })),
      LastEvaluatedKey: { pk: "p", sk: "s4" },
    }));
    const page = await new DynamoItemStore(doc, "t").query({
      pk: "p",
      filter: { kind: "x" },
      limit: 2,
    });
    expect(page.items.map((i) => i.sk)).toEqual(["s1", "s2"]);
    expect(calls[0]!.input.Limit).toBe(25);
    await new DynamoItemStore(doc, "t").query({ pk: "p", limit: 2, cursor: page.cursor });
    expect(calls[1]!.input).toMatchObject({ ExclusiveStartKey: { pk: "p", sk: "s2" }, Limit: 2 });
  });
});

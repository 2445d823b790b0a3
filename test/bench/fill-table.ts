/**
 * Fills the local stack's table with finished tasks: copies of every item of
 * one finished task (its task record, branch and commits, index attributes
 * included) under new task ids, written with BatchWriteItem. The bench then
 * measures steps in a table that holds them.
 */
import { BatchWriteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { taskPk } from "@stackvm/core";
import type { TestStack } from "../support/stack";

/** Writes `count` copies of the finished task `taskId` of tenant `local`; answers the items written. */
export async function fillFinishedTasks(
  t: TestStack,
  taskId: string,
  count: number,
): Promise<number> {
  const { doc } = t.stack.clients;
  const items = await taskItems(t, taskId);
  const template = JSON.stringify(items);
  const copies: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    // Same length as the original id: the copy's keys sort as real ones do.
    const id = `${taskId.slice(0, -7)}f${i.toString(36).padStart(6, "0")}`;
    copies.push(...(JSON.parse(template.replaceAll(taskId, id)) as Record<string, unknown>[]));
  }
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < copies.length; i += 25) batches.push(copies.slice(i, i + 25));
  const write = async (batch: Record<string, unknown>[]) => {
    let pending = batch.map((Item) => ({ PutRequest: { Item } }));
    while (pending.length > 0) {
      const out = await doc.send(new BatchWriteCommand({ RequestItems: { stackvm: pending } }));
      pending = (out.UnprocessedItems?.stackvm ?? []) as typeof pending;
    }
  };
  for (let i = 0; i < batches.length; i += 4) await Promise.all(batches.slice(i, i + 4).map(write));
  return copies.length;
}

/** Every item of a task of tenant `local`, as stored. */
export async function taskItems(t: TestStack, taskId: string): Promise<Record<string, unknown>[]> {
  const { doc } = t.stack.clients;
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: "stackvm",
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": taskPk("local", taskId) },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * The sizes a new task may have, checked before anything is written, with
 * messages that name what the caller sent and the limit (never a store key).
 * A plan, metadata and a response format are stored inline in the task's
 * records; inputs go to the blob store when they are large (`store/values.ts`),
 * so only what stays inline counts for them.
 */
import { TooLargeError } from "../errors";
import { itemSize, MAX_ITEM_BYTES } from "../store/item-rules";
import { jsonSize } from "../store/values";

/** The largest plan a task may be given, as JSON in bytes (256 KiB). */
export const MAX_PLAN_BYTES = 256 * 1024;
/** The largest `metadata`, as JSON in bytes (16 KiB). */
export const MAX_METADATA_BYTES = 16 * 1024;
/** The largest `response_format`, as JSON in bytes (16 KiB). */
export const MAX_RESPONSE_FORMAT_BYTES = 16 * 1024;

/**
 * Throws `TooLargeError` (413) when a field of a new task is over its limit.
 *
 * @example
 * checkTaskFields({ plan: hugePlan, metadata: {} }) // the plan is 921,654 bytes as JSON, over the limit of 262,144 bytes
 */
export function checkTaskFields(input: {
  plan?: unknown;
  metadata?: unknown;
  response_format?: unknown;
}): void {
  const fields: Array<[string, unknown, number, string]> = [
    ["the plan", input.plan, MAX_PLAN_BYTES, "split the work into several tasks"],
    ["metadata", input.metadata, MAX_METADATA_BYTES, "keep ids and labels there, data in inputs"],
    ["response_format", input.response_format, MAX_RESPONSE_FORMAT_BYTES, "describe the answer"],
  ];
  for (const [name, value, limit, advice] of fields) {
    if (value === undefined) continue;
    const size = jsonSize(value);
    if (size > limit) {
      throw new TooLargeError(
        `${name} is ${size} bytes as JSON, over the limit of ${limit} bytes: ${advice}`,
      );
    }
  }
}

/**
 * Throws `TooLargeError` (413) when a record of the task, as it will be stored,
 * is over the store's item limit: the fields within their own limits can still
 * add up (a long goal, a large plan, many inputs kept inline).
 */
export function checkRecordFits(record: object, what: string): void {
  const size = itemSize(record as Record<string, unknown>);
  if (size > MAX_ITEM_BYTES) {
    throw new TooLargeError(
      `${what} take ${size} bytes together once stored, over the limit of ${MAX_ITEM_BYTES} bytes: send a smaller plan or goal, or fewer inputs`,
    );
  }
}

/**
 * Large values live in the blob store, content-addressed by SHA-256; items hold a
 * small reference `{ $blob: sha256, size }`. No item comes near DynamoDB's 400 KB
 * limit: a single value over 64 KiB is spilled, and so is a whole attribute
 * (inputs, a window) whose sum is over the limit.
 */
import type { Blobs } from "../ports/blobs";

/** Values larger than this (as JSON, in bytes) go to the blob store. */
export const INLINE_LIMIT = 64 * 1024;

export interface StoredRef {
  $blob: string;
  size: number;
}

export function isStoredRef(value: unknown): value is StoredRef {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as StoredRef).$blob === "string" &&
    typeof (value as StoredRef).size === "number" &&
    Object.keys(value).length === 2
  );
}

const encoder = new TextEncoder();

/** The size of a value as JSON, in bytes. */
export function jsonSize(value: unknown): number {
  return encoder.encode(JSON.stringify(value) ?? "null").byteLength;
}

/** Stores a value when it is over the limit; returns the value or its reference. */
export async function spillValue(
  value: unknown,
  blobs: Blobs,
  prefix: string,
  limit = INLINE_LIMIT,
): Promise<unknown> {
  if (isStoredRef(value)) return value;
  const bytes = encoder.encode(JSON.stringify(value) ?? "null");
  if (bytes.byteLength <= limit) return value;
  const ref = await blobs.put(prefix, bytes, "application/json");
  return { $blob: ref.sha256, size: ref.size } satisfies StoredRef;
}

/** Spills each large value of a record, then the whole record if it is still too large. */
export async function spillRecord(
  record: Record<string, unknown>,
  blobs: Blobs,
  prefix: string,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    out[name] = await spillValue(value, blobs, prefix);
  }
  return out;
}

/** Reads a value back whole when it is a reference. */
export async function loadValue(value: unknown, blobs: Blobs, prefix: string): Promise<unknown> {
  if (!isStoredRef(value)) return value;
  const bytes = await blobs.get(prefix, value.$blob);
  if (!bytes) throw new Error(`blob ${value.$blob} is missing under ${prefix}`);
  return JSON.parse(new TextDecoder().decode(bytes));
}

/** The blob prefix of a task: deleting the task deletes everything under it. */
export const taskBlobPrefix = (tenant: string, taskId: string): string => `t/${tenant}/${taskId}`;

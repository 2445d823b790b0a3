/**
 * How a value is kept in a value slot of a record (a variable, an input, a final
 * answer, a commit's instruction, inputs or window). Large values live in the blob
 * store, content-addressed by SHA-256, and the slot holds a small reference
 * `{ $blob: sha256, size }`: a single value over 64 KiB is spilled, and so is a
 * whole attribute (a commit's inputs, a window) over its own limit.
 *
 * A reference is recognized by its shape, so data must never have that shape:
 * a user value that would read as a reference, or as the escape itself, is kept
 * escaped as `{ $value: original }` (`encodeValue`) and read back unchanged
 * (`decodeValue`). Only the top of a slot is ever read this way: what a value
 * holds inside is the user's and is never looked at. Values stored before the
 * escape existed read back the same, since an unescaped value is taken as is.
 */
import type { Blobs } from "../ports/blobs";

/** Values larger than this (as JSON, in bytes) go to the blob store. */
export const INLINE_LIMIT = 64 * 1024;

export interface StoredRef {
  $blob: string;
  size: number;
}

/** True for a reference to a spilled value (the top of a slot only). */
export function isStoredRef(value: unknown): value is StoredRef {
  return (
    isPlainObject(value) &&
    typeof value.$blob === "string" &&
    typeof value.size === "number" &&
    Object.keys(value).length === 2
  );
}

/** An escaped user value: `{ $value: original }`, and nothing else. */
function isEscaped(value: unknown): value is { $value: unknown } {
  return isPlainObject(value) && Object.hasOwn(value, "$value") && Object.keys(value).length === 1;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The form of a user value in a slot: the value itself, or, when its shape is one
 * the store reads (a reference, an escape), the value escaped.
 *
 * @example
 * encodeValue({ $blob: "abc", size: 3 }) // { $value: { $blob: "abc", size: 3 } }
 * encodeValue({ a: 1 }) // { a: 1 }
 */
export function encodeValue(value: unknown): unknown {
  return isStoredRef(value) || isEscaped(value) ? { $value: value } : value;
}

/** A slot read back: an escaped value unescaped; a reference or any other value as is. */
export function decodeValue(stored: unknown): unknown {
  return isEscaped(stored) ? stored.$value : stored;
}

const encoder = new TextEncoder();

/** The size of a value as JSON, in bytes. */
export function jsonSize(value: unknown): number {
  return encoder.encode(JSON.stringify(value) ?? "null").byteLength;
}

/** The form of a user value in a slot: escaped when it must be, stored when over the limit. */
export async function spillValue(
  value: unknown,
  blobs: Blobs,
  prefix: string,
  limit = INLINE_LIMIT,
): Promise<unknown> {
  const bytes = encoder.encode(JSON.stringify(value) ?? "null");
  if (bytes.byteLength <= limit) return encodeValue(value);
  const ref = await blobs.put(prefix, bytes, "application/json");
  return { $blob: ref.sha256, size: ref.size } satisfies StoredRef;
}

/** Spills each value of a record that is over the limit (see `spillValue`). */
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

/**
 * The slot form a record would have after `spillRecord`, without writing: a
 * value over the limit stands as a reference of the right size. For checking
 * what a record will weigh before anything is written.
 */
export function spilledForm(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    const size = jsonSize(value);
    out[name] = size > INLINE_LIMIT ? { $blob: "0".repeat(64), size } : encodeValue(value);
  }
  return out;
}

/** Reads a slot back whole: a reference loaded from the blob store, an escape undone. */
export async function loadValue(stored: unknown, blobs: Blobs, prefix: string): Promise<unknown> {
  if (!isStoredRef(stored)) return decodeValue(stored);
  const bytes = await blobs.get(prefix, stored.$blob);
  if (!bytes) throw new Error(`blob ${stored.$blob} is missing under ${prefix}`);
  return JSON.parse(new TextDecoder().decode(bytes));
}

/** The blob prefix of a task: deleting the task deletes everything under it. */
export const taskBlobPrefix = (tenant: string, taskId: string): string => `t/${tenant}/${taskId}`;

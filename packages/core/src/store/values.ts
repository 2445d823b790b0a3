/**
 * How a value is kept in a value slot of a record (a variable, an input, a final
 * answer, a commit's instruction, inputs or window). Large values live in the blob
 * store, content-addressed by SHA-256, and the slot holds a small reference
 * `{ $blob: sha256, size }`: a single value over 64 KiB (or nested over 16
 * levels) is spilled, and so is a whole attribute (a commit's inputs, a window)
 * over its own limit.
 *
 * A reference is recognized by its shape, so data must never have that shape:
 * a user value that would read as a reference, or as the escape itself, is kept
 * escaped as `{ $value: original }` (`encodeValue`) and read back unchanged
 * (`decodeValue`). Only the top of a slot is ever read this way: what a value
 * holds inside is the user's and is never looked at. Values stored before the
 * escape existed read back the same, since an unescaped value is taken as is.
 */

import { jsonDepth } from "../plan/json-shape";
import type { Blobs } from "../ports/blobs";

/** Values larger than this (as JSON, in bytes) go to the blob store. */
export const INLINE_LIMIT = 64 * 1024;

/**
 * Values nested deeper than this go to the blob store too: a slot sits a few
 * levels down in its item (`config.inputs.x`, `vars.x`), and DynamoDB allows 32
 * levels in all.
 */
export const INLINE_DEPTH = 16;

/**
 * A commit's instruction, inputs or window, or a group member's held inputs,
 * larger than this (as JSON, in bytes) is stored whole in the blob store.
 */
export const ATTRIBUTE_LIMIT = 128 * 1024;

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
  const encoded = encodeValue(value);
  if (jsonSize(value) <= limit && jsonDepth(encoded) <= INLINE_DEPTH) return encoded;
  return putBlob(value, blobs, prefix);
}

/** Writes a value to the blob store as JSON; answers its reference. */
async function putBlob(value: unknown, blobs: Blobs, prefix: string): Promise<StoredRef> {
  const bytes = encoder.encode(JSON.stringify(value) ?? "null");
  const ref = await blobs.put(prefix, bytes, "application/json");
  return { $blob: ref.sha256, size: ref.size };
}

/**
 * Which values of a record are spilled: each over the limits, then the largest
 * of the rest until what stays inline is within `INLINE_LIMIT` in all, so that
 * a record of many values just under the limit still fits its item.
 */
function spillChoices(record: Record<string, unknown>) {
  const choices = Object.entries(record).map(([name, value]) => {
    const encoded = encodeValue(value);
    const size = jsonSize(value);
    return {
      name,
      value,
      encoded,
      size,
      spill: size > INLINE_LIMIT || jsonDepth(encoded) > INLINE_DEPTH,
    };
  });
  let inline = 0;
  for (const c of choices) if (!c.spill) inline += c.size;
  for (const c of [...choices].sort((a, b) => b.size - a.size)) {
    if (inline <= INLINE_LIMIT) break;
    if (c.spill) continue;
    c.spill = true;
    inline -= c.size;
  }
  return choices;
}

/** Stores a record's values in slots: escaped where they must be, spilled as `spillChoices` says. */
export async function spillRecord(
  record: Record<string, unknown>,
  blobs: Blobs,
  prefix: string,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const c of spillChoices(record)) {
    out[c.name] = c.spill ? await putBlob(c.value, blobs, prefix) : c.encoded;
  }
  return out;
}

/**
 * The slot form a record would have after `spillRecord`, without writing: a
 * spilled value stands as a reference of the right size. For checking what a
 * record will weigh before anything is written.
 */
export function spilledForm(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of spillChoices(record)) {
    out[c.name] = c.spill
      ? ({ $blob: "0".repeat(64), size: c.size } satisfies StoredRef)
      : c.encoded;
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

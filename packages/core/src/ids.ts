/** Identifiers: random ones for new records, derived ones for idempotency. */
import { createHash, randomBytes } from "node:crypto";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A random lowercase id of `length` characters from [a-z0-9]. */
export function randomId(length: number): string {
  const bytes = randomBytes(length);
  let id = "";
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  return id;
}

/** A new task id: `tsk_` and 20 random characters. */
export const newTaskId = (): string => `tsk_${randomId(20)}`;

/** A new branch's internal id (commits are keyed by it). */
export const newBranchId = (): string => randomId(8);

/** A stable hex digest of the parts, for idempotency and deduplication keys. */
export function digest(...parts: Array<string | number | null>): string {
  return createHash("sha256")
    .update(parts.map((p) => String(p)).join("\u0000"))
    .digest("hex")
    .slice(0, 40);
}

/** The hex SHA-256 of the bytes (a blob's address in `Blobs`). */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The blob store in memory: content-addressed by SHA-256 under a prefix, as
 * `S3Blobs` stores them in a bucket.
 */
import { createHash } from "node:crypto";
import type { BlobRef, Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import { systemClock } from "../ports/clock";

/** S3 presigned URLs live at most seven days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 60 * 60;

/**
 * A `Blobs` held in a Map. `presign` returns a `memory://` URL that names the
 * object and its expiry: nothing can fetch it, but tests can read it.
 *
 * @example
 * const blobs = new MemoryBlobs();
 * const ref = await blobs.put("T#t1/task1", new TextEncoder().encode("hi"), "text/plain");
 * await blobs.get("T#t1/task1", ref.sha256); // the bytes
 */
export class MemoryBlobs implements Blobs {
  readonly #objects = new Map<string, { bytes: Uint8Array; contentType: string; at: number }>();
  readonly #clock: Clock;

  constructor(options: { clock?: Clock } = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  async put(prefix: string, bytes: Uint8Array, contentType: string): Promise<BlobRef> {
    const sha256 = sha256Hex(bytes);
    const key = blobKey(prefix, sha256);
    if (!this.#objects.has(key)) {
      this.#objects.set(key, { bytes: Uint8Array.from(bytes), contentType, at: this.#clock.now() });
    }
    return { $ref: "s3", size: bytes.byteLength, sha256 };
  }

  async get(prefix: string, sha256: string): Promise<Uint8Array | null> {
    const object = this.#objects.get(blobKey(prefix, sha256));
    return object === undefined ? null : Uint8Array.from(object.bytes);
  }

  async presign(prefix: string, sha256: string, seconds: number): Promise<string> {
    const key = blobKey(prefix, sha256);
    const expires = Math.floor(this.#clock.now() / 1000) + presignSeconds(seconds);
    return `memory://blobs/${key.split("/").map(encodeURIComponent).join("/")}?expires=${expires}`;
  }

  async deletePrefix(prefix: string): Promise<void> {
    const start = `${checkPrefix(prefix)}/`;
    for (const key of [...this.#objects.keys()]) {
      if (key.startsWith(start)) this.#objects.delete(key);
    }
  }

  async deleteOlderThan(prefix: string, before: Date): Promise<number> {
    const start = `${checkPrefix(prefix)}/`;
    let deleted = 0;
    for (const [key, object] of [...this.#objects]) {
      if (key.startsWith(start) && object.at < before.getTime()) {
        this.#objects.delete(key);
        deleted++;
      }
    }
    return deleted;
  }

  /** The stored keys and content types, for assertions in tests. */
  keys(): Array<{ key: string; contentType: string; size: number }> {
    return [...this.#objects].map(([key, o]) => ({
      key,
      contentType: o.contentType,
      size: o.bytes.byteLength,
    }));
  }
}

/** The hex SHA-256 of the bytes: the blob's address. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The object key of a blob, `{prefix}/{sha256}`, refusing a prefix or a hash
 * that could reach outside the prefix (a leading or doubled slash, `..`).
 */
export function blobKey(prefix: string, sha256: string): string {
  if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) {
    throw new TypeError(
      `blob sha256 must be 64 lowercase hex characters, got ${JSON.stringify(sha256)}`,
    );
  }
  return `${checkPrefix(prefix)}/${sha256}`;
}

/** Validates a blob prefix: non-empty segments separated by single slashes. */
export function checkPrefix(prefix: string): string {
  const ok =
    typeof prefix === "string" &&
    prefix.length > 0 &&
    prefix.split("/").every((part) => part.length > 0 && part !== "." && part !== "..");
  if (!ok) {
    throw new TypeError(
      `blob prefix must be non-empty path segments joined by '/', without leading, trailing or doubled slashes or '..', got ${JSON.stringify(prefix)}`,
    );
  }
  return prefix;
}

/** S3 accepts presigned URLs valid from 1 second to 7 days. */
export function presignSeconds(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_PRESIGN_SECONDS) {
    throw new TypeError(
      `presign seconds must be a whole number from 1 to ${MAX_PRESIGN_SECONDS} (7 days), got ${seconds}`,
    );
  }
  return seconds;
}

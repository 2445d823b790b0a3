/**
 * The blob store in memory: content-addressed by SHA-256 under a prefix, as
 * `S3Blobs` stores them in a bucket.
 */
import { sha256Hex } from "../../ids";
import type { BlobRef, Blobs } from "../../ports/blobs";
import { blobKey, checkPrefix, presignSeconds } from "../../ports/blobs";
import type { Clock } from "../../ports/clock";
import { systemClock } from "../../ports/clock";

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

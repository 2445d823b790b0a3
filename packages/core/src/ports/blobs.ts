/**
 * The blob port: content-addressed bytes (S3 on AWS), stored under a prefix
 * that starts with the tenant and the task, so that deleting a task deletes its
 * blobs and no key crosses tenants.
 */
export interface BlobRef {
  $ref: "s3";
  size: number;
  sha256: string;
}

export interface Blobs {
  /** Stores the bytes under `{prefix}/{sha256}`; storing the same bytes twice is one object. */
  put(prefix: string, bytes: Uint8Array, contentType: string): Promise<BlobRef>;
  /** Reads the bytes back, or null when absent. */
  get(prefix: string, sha256: string): Promise<Uint8Array | null>;
  /** A time-limited URL that reads the object without credentials. */
  presign(prefix: string, sha256: string, seconds: number): Promise<string>;
  /** Deletes every object under the prefix. */
  deletePrefix(prefix: string): Promise<void>;
  /**
   * Deletes the objects under the prefix written before `before`; answers how
   * many. Expiry where no lifecycle rule does it (the local stack's LLM traces).
   */
  deleteOlderThan(prefix: string, before: Date): Promise<number>;
}

/** S3 presigned URLs live at most seven days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 60 * 60;

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

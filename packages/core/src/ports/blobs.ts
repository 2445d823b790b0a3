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

/**
 * The uploads port: a time-limited URL that takes one PUT of a large document
 * straight to S3 (the API never carries its bytes), and reading it back by key.
 * Adapters: `S3Uploads` (@stackvm/aws; the local S3 emulator too) and
 * `MemoryUploads` (core, for unit tests).
 */
export interface DocumentUploads {
  /** A URL that takes one `PUT` of the object at `key` (with this content type) for `seconds`. */
  presignPut(key: string, contentType: string, seconds: number): Promise<string>;
  /** The object's size in bytes, or null while it has not arrived. */
  size(key: string): Promise<number | null>;
  /**
   * The object's bytes, or null when absent; at most `maxBytes + 1` of them
   * (a longer answer means the object is over `maxBytes`): the object may have
   * been PUT again, bigger, after its size was checked.
   */
  get(key: string, maxBytes: number): Promise<Uint8Array | null>;
}

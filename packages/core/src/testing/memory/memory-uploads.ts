/**
 * `DocumentUploads` in memory: `presignPut` answers a `memory://` URL, and a
 * test plays the client's PUT with `put(key, bytes)`.
 */
import type { DocumentUploads } from "../../ports/uploads";

export class MemoryUploads implements DocumentUploads {
  readonly #objects = new Map<string, Uint8Array>();

  async presignPut(key: string, _contentType: string, seconds: number): Promise<string> {
    return `memory://uploads/${key}?expires_in=${seconds}`;
  }

  async size(key: string): Promise<number | null> {
    return this.#objects.get(key)?.byteLength ?? null;
  }

  async get(key: string, maxBytes: number): Promise<Uint8Array | null> {
    return this.#objects.get(key)?.subarray(0, maxBytes + 1) ?? null;
  }

  /** What the client's PUT to the URL does. */
  put(key: string, bytes: Uint8Array): void {
    this.#objects.set(key, bytes);
  }
}

/**
 * The blob port on S3: objects at `{prefix}/{sha256}`, written once (a HEAD
 * first skips the upload of bytes already stored), read back whole, shared by
 * presigned URL, deleted by prefix (or, under a prefix, by age).
 */
import {
  type _Object,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import {
  type BlobRef,
  type Blobs,
  blobKey,
  checkPrefix,
  presignSeconds,
  sha256Hex,
} from "@stackvm/core";
import { type AwsClientsOptions, checkLocalCredentials, clientConfig } from "./client-config";

/** The S3 client; with a local endpoint, path-style, since virtual-hosted names (bucket.127.0.0.1) do not resolve. */
export function s3Client(options: AwsClientsOptions): S3Client {
  checkLocalCredentials(options);
  const endpoint = options.endpoints?.s3;
  return new S3Client({
    ...clientConfig(options, endpoint),
    ...(endpoint ? { forcePathStyle: true } : {}),
  });
}

/** Makes the URL of `presign`: by default S3's own presigner on the same client. */
export type Presigner = (request: {
  bucket: string;
  key: string;
  seconds: number;
}) => Promise<string>;

/**
 * `Blobs` on one S3 bucket. Pass a `presigner` when readers reach S3 by
 * another address than the function does (a CDN, a public emulator endpoint).
 *
 * @example
 * const blobs = new S3Blobs(clients.s3, Resource.Blobs.name);
 * const ref = await blobs.put(`T#${tenant}/${task}`, bytes, "application/json");
 */
export class S3Blobs implements Blobs {
  readonly #presigner: Presigner;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    presigner?: Presigner,
  ) {
    this.#presigner =
      presigner ??
      (({ bucket, key, seconds }) =>
        getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: key }), {
          expiresIn: seconds,
        }));
  }

  async put(prefix: string, bytes: Uint8Array, contentType: string): Promise<BlobRef> {
    const sha256 = sha256Hex(bytes);
    const key = blobKey(prefix, sha256);
    const ref: BlobRef = { $ref: "s3", size: bytes.byteLength, sha256 };
    if (await this.#exists(key)) return ref;
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: bytes,
        ContentType: contentType,
        // S3 checks the bytes against the hash we address them by.
        ChecksumSHA256: Buffer.from(sha256, "hex").toString("base64"),
      }),
    );
    return ref;
  }

  async get(prefix: string, sha256: string): Promise<Uint8Array | null> {
    try {
      const out = await this.s3.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: blobKey(prefix, sha256) }),
      );
      return out.Body ? await out.Body.transformToByteArray() : new Uint8Array(0);
    } catch (error) {
      if (errorName(error) === "NoSuchKey") return null;
      throw error;
    }
  }

  async presign(prefix: string, sha256: string, seconds: number): Promise<string> {
    return this.#presigner({
      bucket: this.bucket,
      key: blobKey(prefix, sha256),
      seconds: presignSeconds(seconds),
    });
  }

  async deletePrefix(prefix: string): Promise<void> {
    await this.#deleteListed(prefix, () => true);
  }

  async deleteOlderThan(prefix: string, before: Date): Promise<number> {
    return this.#deleteListed(
      prefix,
      (o) => o.LastModified !== undefined && o.LastModified < before,
    );
  }

  /** Deletes the objects under the prefix that `which` picks, a page at a time; answers how many. */
  async #deleteListed(prefix: string, which: (object: _Object) => boolean): Promise<number> {
    // The trailing slash keeps `T#a/task1` from reaching `T#a/task10`.
    const start = `${checkPrefix(prefix)}/`;
    let token: string | undefined;
    let deleted = 0;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: start, ContinuationToken: token }),
      );
      const keys = (page.Contents ?? []).flatMap((o) =>
        o.Key && which(o) ? [{ Key: o.Key }] : [],
      );
      if (keys.length > 0) {
        const out = await this.s3.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }),
        );
        const failed = out.Errors ?? [];
        if (failed.length > 0) {
          throw new Error(
            `S3 did not delete ${failed.length} objects under ${start} (first: ${failed[0]?.Key}: ${failed[0]?.Code} ${failed[0]?.Message})`,
          );
        }
        deleted += keys.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return deleted;
  }

  async #exists(key: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (errorName(error) === "NotFound" || errorName(error) === "NoSuchKey") return false;
      throw error;
    }
  }
}

function errorName(error: unknown): unknown {
  return (error as { name?: unknown } | null)?.name;
}

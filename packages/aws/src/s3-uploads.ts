/**
 * The uploads port on S3: a presigned `PUT` URL for one object of the bucket,
 * its size by `HEAD`, its bytes by a ranged `GET` that reads no more than allowed.
 */
import {
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { checkPrefix, type DocumentUploads } from "@stackvm/core";

export class S3Uploads implements DocumentUploads {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  presignPut(key: string, contentType: string, seconds: number): Promise<string> {
    return getSignedUrl(
      this.s3,
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: checkPrefix(key),
        ContentType: contentType,
      }),
      { expiresIn: seconds },
    );
  }

  async size(key: string): Promise<number | null> {
    try {
      const head = await this.s3.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: checkPrefix(key) }),
      );
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async get(key: string, maxBytes: number): Promise<Uint8Array | null> {
    try {
      // A range, so that an object PUT again bigger after its HEAD is not read whole.
      const out = await this.s3.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: checkPrefix(key),
          Range: `bytes=0-${maxBytes}`,
        }),
      );
      return out.Body ? await out.Body.transformToByteArray() : new Uint8Array(0);
    } catch (error) {
      if (isMissing(error)) return null;
      // An empty object has no byte 0 to start a range at.
      if (isEmptyRange(error)) return new Uint8Array(0);
      throw error;
    }
  }
}

function isEmptyRange(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === "InvalidRange" || e.$metadata?.httpStatusCode === 416;
}

function isMissing(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === "NoSuchKey" || e.name === "NotFound" || e.$metadata?.httpStatusCode === 404;
}

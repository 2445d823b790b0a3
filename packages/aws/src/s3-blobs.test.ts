import type { S3Client } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { S3Blobs } from "./s3-blobs";

function fakeS3(answer: (name: string) => unknown) {
  const calls: Array<{ name: string; input: Record<string, unknown> }> = [];
  const s3 = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      calls.push({ name: command.constructor.name, input: command.input });
      const out = answer(command.constructor.name);
      if (out instanceof Error) throw out;
      return out;
    },
  };
  return { s3: s3 as unknown as S3Client, calls };
}

const hello = new TextEncoder().encode("hello");
const HELLO = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

describe("S3Blobs", () => {
  it("skips the upload when the object is already there", async () => {
    const { s3, calls } = fakeS3(() => ({}));
    const ref = await new S3Blobs(s3, "bucket").put("T#t/task", hello, "text/plain");
    expect(ref).toEqual({ $ref: "s3", size: 5, sha256: HELLO });
    expect(calls.map((c) => c.name)).toEqual(["HeadObjectCommand"]);
    expect(calls[0]!.input).toEqual({ Bucket: "bucket", Key: `T#t/task/${HELLO}` });
  });

  it("uploads with its content type and SHA-256 checksum when absent", async () => {
    const notFound = Object.assign(new Error("not found"), { name: "NotFound" });
    const { s3, calls } = fakeS3((name) => (name === "HeadObjectCommand" ? notFound : {}));
    await new S3Blobs(s3, "bucket").put("T#t/task", hello, "text/plain");
    expect(calls.map((c) => c.name)).toEqual(["HeadObjectCommand", "PutObjectCommand"]);
    expect(calls[1]!.input).toMatchObject({
      Key: `T#t/task/${HELLO}`,
      ContentType: "text/plain",
      ChecksumSHA256: Buffer.from(HELLO, "hex").toString("base64"),
    });
  });

  it("rethrows errors other than a missing object", async () => {
    const denied = Object.assign(new Error("denied"), { name: "AccessDenied" });
    const { s3 } = fakeS3(() => denied);
    await expect(new S3Blobs(s3, "bucket").get("T#t/task", HELLO)).rejects.toBe(denied);
  });

  it("presigns through the given presigner with the object key", async () => {
    const { s3 } = fakeS3(() => ({}));
    const seen: unknown[] = [];
    const blobs = new S3Blobs(s3, "bucket", async (request) => {
      seen.push(request);
      return "https://cdn.example/x";
    });
    expect(await blobs.presign("T#t/task", HELLO, 60)).toBe("https://cdn.example/x");
    expect(seen).toEqual([{ bucket: "bucket", key: `T#t/task/${HELLO}`, seconds: 60 }]);
    await expect(blobs.presign("T#t/task", HELLO, 8 * 24 * 3600)).rejects.toThrow(/7 days/);
  });
});

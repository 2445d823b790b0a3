import { describe, expect, it } from "vitest";
import { FileStore } from "../store/file-store";
import { MemoryBlobs, MemoryItemStore, MemoryUploads } from "../testing";
import { resolveSandboxFiles } from "./file-refs";
import { FileService } from "./file-service";
import { fileUploadKey } from "./records";

function setup(now = { t: Date.parse("2026-12-02T15:00:00Z") }) {
  const items = new MemoryItemStore();
  const blobs = new MemoryBlobs();
  const uploads = new MemoryUploads();
  const files = new FileStore(items);
  const service = new FileService({
    files,
    blobs,
    uploads,
    clock: { now: () => now.t },
    maxUploadBytes: 1000,
    maxFileBytes: 5000,
  });
  return { items, blobs, uploads, files, service, now };
}

const bytes = (n: number, fill = 7) => new Uint8Array(n).fill(fill);

describe("FileService", () => {
  it("answers a multipart upload ready, and its bytes back to its tenant only", async () => {
    const { service } = setup();
    const file = await service.upload("acme", {
      filename: "dir/a.csv",
      contentType: undefined,
      bytes: new TextEncoder().encode("x,y\n"),
    });
    expect(file).toMatchObject({
      filename: "a.csv",
      content_type: "text/csv",
      size: 4,
      status: "ready",
    });
    expect(new TextDecoder().decode((await service.content("acme", file.file_id)).bytes)).toBe(
      "x,y\n",
    );
    await expect(service.get("other", file.file_id)).rejects.toMatchObject({ code: "not_found" });
    await expect(service.content("other", file.file_id)).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("refuses an upload over its limit and keeps nothing", async () => {
    const { service } = setup();
    await expect(
      service.upload("acme", { filename: "a.bin", contentType: undefined, bytes: bytes(1001) }),
    ).rejects.toMatchObject({ code: "too_large" });
    expect((await service.list("acme", null, 100)).files).toEqual([]);
  });

  it("takes a presigned upload in on the first read after the PUT, once", async () => {
    const { service, uploads } = setup();
    const { file } = await service.presign("acme", { filename: "big.bin" });
    expect(file.status).toBe("pending");
    await expect(service.ready("acme", file.file_id)).rejects.toMatchObject({
      code: "file_not_ready",
    });
    uploads.put(fileUploadKey("acme", file.file_id), bytes(3000));
    const [a, b] = await Promise.all([
      service.get("acme", file.file_id),
      service.get("acme", file.file_id),
    ]);
    expect(a).toMatchObject({ status: "ready", size: 3000 });
    expect(b.sha256).toBe(a.sha256);
    expect((await service.content("acme", file.file_id)).bytes.byteLength).toBe(3000);
  });

  it("fails a presigned upload over the most a file may have, or never PUT", async () => {
    const { service, uploads, now } = setup();
    const big = (await service.presign("acme", { filename: "big.bin" })).file;
    uploads.put(fileUploadKey("acme", big.file_id), bytes(5001));
    expect(await service.get("acme", big.file_id)).toMatchObject({
      status: "failed",
      error: { code: "too_large" },
    });
    const never = (await service.presign("acme", { filename: "never.bin" })).file;
    now.t += 2 * 3600 * 1000;
    expect(await service.get("acme", never.file_id)).toMatchObject({
      status: "failed",
      error: { code: "upload_not_received" },
    });
  });

  it("deletes the bytes with the record, and a reference to it then fails its step", async () => {
    const { service, blobs, files } = setup();
    const file = await service.upload("acme", {
      filename: "a.txt",
      contentType: "text/plain",
      bytes: bytes(10, 65),
    });
    const sources = { tenantId: "acme", blobs, blobPrefix: "t/acme/tsk_1", files };
    expect(await resolveSandboxFiles([{ $file: file.file_id }], sources)).toEqual([
      { path: "a.txt", encoding: "utf8", content: "A".repeat(10) },
    ]);
    await service.delete("acme", file.file_id);
    await expect(resolveSandboxFiles([{ $file: file.file_id }], sources)).rejects.toMatchObject({
      code: "file_not_found",
    });
  });

  it("refuses the files of a run over the most one run takes, before reading the rest", async () => {
    const { service, blobs, files } = setup();
    const a = await service.upload("acme", {
      filename: "a.bin",
      contentType: undefined,
      bytes: bytes(600, 0),
    });
    const sources = { tenantId: "acme", blobs, blobPrefix: "t/acme/tsk_1", files };
    const [read] = await resolveSandboxFiles([{ $file: a.file_id }], sources, 1000);
    expect(read).toMatchObject({ path: "a.bin", encoding: "base64" });
    await expect(
      resolveSandboxFiles(
        [{ $file: a.file_id }, { $file: a.file_id, path: "b.bin" }],
        sources,
        1000,
      ),
    ).rejects.toMatchObject({ code: "files_too_large" });
  });
});

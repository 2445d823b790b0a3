import { describe, expect, it } from "vitest";
import { DEFAULT_QUOTAS, QuotaService } from "../service/quotas";
import { FileStore } from "../store/file-store";
import { QuotaStore } from "../store/quota-store";
import { TaskStore } from "../store/task-store";
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

  describe("with the tenant's file storage quota", () => {
    function withQuota(limit: number) {
      const base = setup();
      const clock = { now: () => base.now.t };
      const quotaStore = new QuotaStore(base.items);
      const quotas = new QuotaService({
        quotaStore,
        store: new TaskStore(base.items),
        clock,
        defaults: { ...DEFAULT_QUOTAS, file_storage_bytes: limit },
      });
      const service = new FileService({
        files: base.files,
        blobs: base.blobs,
        uploads: base.uploads,
        storage: quotas,
        clock,
        maxUploadBytes: 1000,
        maxFileBytes: 5000,
      });
      return { ...base, service, quotas, quotaStore };
    }
    const up = (service: FileService, n: number, tenant = "acme") =>
      service.upload(tenant, { filename: "a.bin", contentType: undefined, bytes: bytes(n) });

    it("refuses the upload that would pass the quota, keeping nothing of it, and counts a delete back", async () => {
      const { service, quotaStore } = withQuota(1500);
      const first = await up(service, 1000);
      await expect(up(service, 600)).rejects.toMatchObject({
        kind: "conflict",
        code: "file_storage_full",
        message: expect.stringContaining("DELETE /v1/files/{id}"),
      });
      expect((await service.list("acme", null, 100)).files).toHaveLength(1);
      expect(await quotaStore.fileBytes("acme")).toBe(1000);
      // Another tenant's room is its own.
      await up(service, 1000, "other");
      await service.delete("acme", first.file_id);
      expect(await quotaStore.fileBytes("acme")).toBe(0);
      await up(service, 600);
      expect(await quotaStore.fileBytes("acme")).toBe(600);
    });

    it("counts one of two deletes at once, and none of many uploads side by side past the quota", async () => {
      const { service, quotaStore } = withQuota(2500);
      const uploads = await Promise.allSettled(Array.from({ length: 6 }, () => up(service, 1000)));
      expect(uploads.filter((u) => u.status === "fulfilled")).toHaveLength(2);
      expect(await quotaStore.fileBytes("acme")).toBe(2000);
      const kept = (await service.list("acme", null, 100)).files;
      expect(kept).toHaveLength(2);
      await Promise.allSettled([
        service.delete("acme", kept[0]!.file_id),
        service.delete("acme", kept[0]!.file_id),
      ]);
      expect(await quotaStore.fileBytes("acme")).toBe(1000);
    });

    it("fails a presigned upload that arrives past the quota, and counts one of two reads", async () => {
      const { service, uploads, quotaStore } = withQuota(4000);
      const { file } = await service.presign("acme", { filename: "big.bin" });
      uploads.put(fileUploadKey("acme", file.file_id), bytes(3000));
      await Promise.all([service.get("acme", file.file_id), service.get("acme", file.file_id)]);
      expect(await quotaStore.fileBytes("acme")).toBe(3000);
      const second = (await service.presign("acme", { filename: "more.bin" })).file;
      uploads.put(fileUploadKey("acme", second.file_id), bytes(1500));
      expect(await service.get("acme", second.file_id)).toMatchObject({
        status: "failed",
        error: { code: "file_storage_full" },
      });
      expect(await quotaStore.fileBytes("acme")).toBe(3000);
    });

    it("gives back nothing for a file stored before the quota was counted", async () => {
      const { service, files, quotaStore } = withQuota(1500);
      await files.create({
        tenant_id: "acme",
        file_id: "file_00000000000000000000",
        filename: "old.bin",
        content_type: "application/octet-stream",
        size: 900,
        sha256: "",
        status: "ready",
        upload: "multipart",
        error: null,
        created_at: "2026-11-01T00:00:00Z",
        updated_at: "2026-11-01T00:00:00Z",
      });
      await up(service, 100);
      await service.delete("acme", "file_00000000000000000000");
      expect(await quotaStore.fileBytes("acme")).toBe(100);
    });
  });
});

/**
 * The tenants' uploaded files (`files/records.ts`): `FILE#{id}` under the
 * tenant, listed newest id last (ids are random; the list is by id).
 */
import { isErrorKind } from "../errors";
import type { Changes, Condition, ItemStore } from "../ports/item-store";
import { FILE_PREFIX, fileKey, tenantPk } from "./keys";
import type { Page } from "./task-store";

/** A file's state: `pending` until a presigned upload's object is taken in. */
export type FileStatus = "pending" | "ready" | "failed";

/** A file record as stored. */
export interface FileRecord {
  tenant_id: string;
  file_id: string;
  filename: string;
  content_type: string;
  /** Bytes; 0 while a presigned upload is pending. */
  size: number;
  /** The bytes' SHA-256, their key under the file's prefix; "" while pending. */
  sha256: string;
  status: FileStatus;
  upload: "multipart" | "presigned";
  /** Its bytes count in the tenant's `file_storage_bytes` (files stored before that quota do not). */
  counted?: boolean;
  error: { code: string; message: string } | null;
  created_at: string;
  updated_at: string;
}

export class FileStore {
  constructor(private readonly items: ItemStore) {}

  /** Writes a new file record; refuses (`ConflictError`) an id that exists. */
  async create(record: FileRecord): Promise<void> {
    await this.items.put(
      { ...fileKey(record.tenant_id, record.file_id), ...record },
      { exists: false },
    );
  }

  async get(tenant: string, fileId: string): Promise<FileRecord | null> {
    return (await this.items.get(fileKey(tenant, fileId))) as unknown as FileRecord | null;
  }

  /** Applies the changes when the condition holds (`ConflictError` when not); answers the record after. */
  async update(
    tenant: string,
    fileId: string,
    changes: Changes,
    condition: Condition,
  ): Promise<FileRecord> {
    return (await this.items.update(
      fileKey(tenant, fileId),
      changes,
      condition,
    )) as unknown as FileRecord;
  }

  async list(tenant: string, limit: number, cursor: string | null): Promise<Page<FileRecord>> {
    const page = await this.items.query({
      pk: tenantPk(tenant),
      prefix: FILE_PREFIX,
      limit,
      cursor,
    });
    return { items: page.items as unknown as FileRecord[], cursor: page.cursor };
  }

  /**
   * Deletes the record; answers it as it was, or null when no record was there
   * (of two deletes at once, one gets the record).
   */
  async delete(tenant: string, fileId: string): Promise<FileRecord | null> {
    const record = await this.get(tenant, fileId);
    if (!record) return null;
    try {
      await this.items.delete(fileKey(tenant, fileId), { exists: true });
    } catch (error) {
      if (isErrorKind(error, "conflict")) return null;
      throw error;
    }
    return record;
  }
}

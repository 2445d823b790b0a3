/**
 * The stored API keys: one item per key under its tenant (`KEY#{key_id}`, what
 * `/v1/keys` lists) and a global pointer by the key's hash (`KEYHASH#{sha256}`)
 * that names its tenant and id. Neither holds the key itself.
 */
import type { ItemStore } from "../ports/item-store";
import { apiKeyHashKey, apiKeyKey, KEY_PREFIX, tenantPk } from "./keys";

/** A key's item: what lists show, and the hash of the key (hex). */
export interface ApiKeyRecord {
  key_id: string;
  name: string;
  prefix: string;
  created_at: string;
  tenant_id: string;
  hash: string;
}

/** The pointer from a key's hash to its tenant and id. */
export interface ApiKeyPointer {
  tenant_id: string;
  key_id: string;
}

export class ApiKeyStore {
  constructor(private readonly items: ItemStore) {}

  /** Writes a new key's item; its id must be new (`ConflictError` otherwise). */
  async createKey(record: ApiKeyRecord): Promise<void> {
    await this.items.put(
      { ...apiKeyKey(record.tenant_id, record.key_id), ...record },
      { exists: false },
    );
  }

  async getKey(tenant: string, keyId: string): Promise<ApiKeyRecord | null> {
    return (await this.items.get(apiKeyKey(tenant, keyId))) as ApiKeyRecord | null;
  }

  /** The tenant's keys (at most 1000). */
  async listKeys(tenant: string): Promise<ApiKeyRecord[]> {
    const page = await this.items.query({ pk: tenantPk(tenant), prefix: KEY_PREFIX, limit: 1000 });
    return page.items as unknown as ApiKeyRecord[];
  }

  async deleteKey(tenant: string, keyId: string): Promise<void> {
    await this.items.delete(apiKeyKey(tenant, keyId));
  }

  async putPointer(hash: string, pointer: ApiKeyPointer): Promise<void> {
    await this.items.put({ ...apiKeyHashKey(hash), ...pointer });
  }

  async getPointer(hash: string): Promise<ApiKeyPointer | null> {
    return (await this.items.get(apiKeyHashKey(hash))) as ApiKeyPointer | null;
  }

  async deletePointer(hash: string): Promise<void> {
    await this.items.delete(apiKeyHashKey(hash));
  }
}

/**
 * API keys. A key reads `svm_{tenant}_{secret}`: the tenant and the key id (the
 * secret's first 12 characters) locate its item in one read, and the item holds
 * only a SHA-256 hash of the whole key, compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import * as z from "zod";
import { NotFoundError, UnauthorizedError } from "../errors";
import type { Clock } from "../ports/clock";
import type { ItemStore } from "../ports/item-store";
import { tenantPk } from "../store/keys";

export const TenantId = z
  .string()
  .regex(/^[a-z0-9-]{1,40}$/, "a tenant id is 1 to 40 of a-z, 0-9 and -");

export interface ApiKeyInfo {
  key_id: string;
  name: string;
  prefix: string;
  created_at: string;
}

export interface NewApiKey extends ApiKeyInfo {
  key: string;
}

const KEY = /^svm_([a-z0-9-]{1,40})_([a-z0-9]{40})$/;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

const hashKey = (key: string): Buffer => createHash("sha256").update(key).digest();
const keyItem = (tenant: string, keyId: string) => ({ pk: tenantPk(tenant), sk: `KEY#${keyId}` });
/** Keys that do not name their tenant are found by hash (not tenant-owned: a pointer). */
const hashItem = (hash: string) => ({ pk: `KEYHASH#${hash}`, sk: "KEY" });

function secret(): string {
  // 40 characters from 36 symbols: about 206 bits. Rejection sampling keeps it uniform.
  let out = "";
  while (out.length < 40) {
    for (const byte of randomBytes(64)) {
      if (byte < 252 && out.length < 40) out += ALPHABET[byte % 36];
    }
  }
  return out;
}

export class ApiKeyService {
  constructor(
    private readonly items: ItemStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates a key for the tenant; `key` is returned only here. An operator may give
   * the key (`fixedKey`, e.g. STACKVM_BOOTSTRAP_API_KEY); one that does not read
   * `svm_{tenant}_...` is found through a hash index instead.
   */
  async create(tenant: string, name: string, fixedKey?: string): Promise<NewApiKey> {
    TenantId.parse(tenant);
    const key = fixedKey ?? `svm_${tenant}_${secret()}`;
    const match = KEY.exec(key);
    if (match && match[1] !== tenant) {
      throw new UnauthorizedError(`this key names tenant '${match[1]}', not '${tenant}'`);
    }
    if (!match && key.length < 16) {
      throw new UnauthorizedError("an API key must be at least 16 characters long");
    }
    const hash = hashKey(key).toString("hex");
    const keyId = match ? `key_${match[2]!.slice(0, 12)}` : `key_${hash.slice(0, 12)}`;
    if (!match) {
      await this.items.put({ ...hashItem(hash), tenant_id: tenant, key_id: keyId });
    }
    const info: ApiKeyInfo = {
      key_id: keyId,
      name,
      prefix: match ? key.slice(0, `svm_${tenant}_`.length + 4) : `${key.slice(0, 4)}…`,
      created_at: new Date(this.clock.now()).toISOString(),
    };
    await this.items.put({
      ...keyItem(tenant, keyId),
      ...info,
      tenant_id: tenant,
      hash,
    });
    return { ...info, key };
  }

  /** The tenant of a key, or `UnauthorizedError`: unknown, revoked and malformed keys alike. */
  async verify(key: string): Promise<{ tenantId: string; keyId: string }> {
    const match = KEY.exec(key);
    let tenant: string;
    let keyId: string;
    if (match) {
      tenant = match[1]!;
      keyId = `key_${match[2]!.slice(0, 12)}`;
    } else {
      const pointer = await this.items.get(hashItem(hashKey(key).toString("hex")));
      if (!pointer) throw new UnauthorizedError("The API key is not valid (unknown or revoked).");
      tenant = pointer.tenant_id as string;
      keyId = pointer.key_id as string;
    }
    const item = await this.items.get(keyItem(tenant, keyId));
    const stored = typeof item?.hash === "string" ? Buffer.from(item.hash, "hex") : null;
    if (stored?.length !== 32 || !timingSafeEqual(stored, hashKey(key))) {
      throw new UnauthorizedError("The API key is not valid (unknown or revoked).");
    }
    return { tenantId: tenant, keyId };
  }

  async list(tenant: string): Promise<ApiKeyInfo[]> {
    const page = await this.items.query({ pk: tenantPk(tenant), prefix: "KEY#", limit: 1000 });
    return page.items.map((i) => ({
      key_id: i.key_id as string,
      name: i.name as string,
      prefix: i.prefix as string,
      created_at: i.created_at as string,
    }));
  }

  async revoke(tenant: string, keyId: string): Promise<void> {
    const existing = await this.items.get(keyItem(tenant, keyId));
    if (!existing) throw new NotFoundError("key", keyId);
    await this.items.delete(keyItem(tenant, keyId));
    await this.items.delete(hashItem(existing.hash as string));
  }
}

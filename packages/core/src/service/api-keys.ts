/**
 * API keys. A key reads `svm_{tenant}_{secret}`. Nothing stores the key itself:
 * its item (`KEY#{key_id}` under the tenant, what `/v1/keys` lists) and a pointer
 * `KEYHASH#{sha256 of the key}` (tenant and key id) hold its hash. A key is
 * verified in one read, of the pointer: only the key hashes to its address.
 *
 * The key id is drawn at random, apart from the secret, since it is shown in
 * lists and logs. Keys made before that have the secret's first 12 characters as
 * their id and no pointer; they are still found by that id and their hash, read
 * from the item and compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import * as z from "zod";
import { NotFoundError, UnauthorizedError } from "../errors";
import { randomId } from "../ids";
import type { Clock } from "../ports/clock";
import type { ApiKeyRecord, ApiKeyStore } from "../store/api-key-store";

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
/** The id a key made before random ids has: `key_` and its secret's first 12 characters. */
const legacyKeyId = (secret: string) => `key_${secret.slice(0, 12)}`;
const INVALID = "The API key is not valid (unknown or revoked).";

/** Whether `a` and `b` have `length` characters in a row in common. */
function shareRun(a: string, b: string, length: number): boolean {
  for (let i = 0; i + length <= a.length; i++) if (b.includes(a.slice(i, i + length))) return true;
  return false;
}

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
    private readonly keys: ApiKeyStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates a key for the tenant; `key` is returned only here. An operator may give
   * the key (`fixedKey`, e.g. STACKVM_BOOTSTRAP_API_KEY at every start): a key
   * that exists already keeps its item and id.
   */
  async create(tenant: string, name: string, fixedKey?: string): Promise<NewApiKey> {
    TenantId.parse(tenant);
    if (fixedKey !== undefined) {
      const named = KEY.exec(fixedKey)?.[1];
      if (named !== undefined && named !== tenant) {
        throw new UnauthorizedError(`this key names tenant '${named}', not '${tenant}'`);
      }
      if (named === undefined && fixedKey.length < 16) {
        throw new UnauthorizedError("an API key must be at least 16 characters long");
      }
      const known = await this.#find(fixedKey);
      if (known && known.tenantId !== tenant) {
        throw new UnauthorizedError(`this key belongs to another tenant than '${tenant}'`);
      }
      if (known) return { ...(await this.#info(tenant, known.keyId)), key: fixedKey };
    }
    const key = fixedKey ?? `svm_${tenant}_${secret()}`;
    let keyId = `key_${randomId(16)}`;
    // Independent draws share four characters in a row about once in 3,500 keys:
    // draw again then, so that no id of a key made here looks like a piece of it.
    while (fixedKey === undefined && shareRun(keyId.slice(4), key.slice(-40), 4)) {
      keyId = `key_${randomId(16)}`;
    }
    const hash = hashKey(key).toString("hex");
    const info: ApiKeyInfo = {
      key_id: keyId,
      name,
      prefix: KEY.test(key) ? key.slice(0, `svm_${tenant}_`.length + 4) : `${key.slice(0, 4)}…`,
      created_at: new Date(this.clock.now()).toISOString(),
    };
    // The item first: a crash between the two writes leaves a listed key that does
    // not work (revoking it cleans up), never one that works unlisted.
    await this.keys.createKey({ ...info, tenant_id: tenant, hash });
    await this.keys.putPointer(hash, { tenant_id: tenant, key_id: keyId });
    return { ...info, key };
  }

  /** The tenant of a key, or `UnauthorizedError`: unknown, revoked and malformed keys alike. */
  async verify(key: string): Promise<{ tenantId: string; keyId: string }> {
    const found = await this.#find(key);
    if (!found) throw new UnauthorizedError(INVALID);
    return found;
  }

  /** The tenant and id of a key: through its hash pointer, or else as a key made before random ids. */
  async #find(key: string): Promise<{ tenantId: string; keyId: string } | null> {
    const hash = hashKey(key);
    const pointer = await this.keys.getPointer(hash.toString("hex"));
    if (pointer) return { tenantId: pointer.tenant_id, keyId: pointer.key_id };
    const match = KEY.exec(key);
    if (!match) return null;
    const tenantId = match[1]!;
    const keyId = legacyKeyId(match[2]!);
    const item = await this.keys.getKey(tenantId, keyId);
    const stored = typeof item?.hash === "string" ? Buffer.from(item.hash, "hex") : null;
    if (stored?.length !== 32 || !timingSafeEqual(stored, hash)) return null;
    return { tenantId, keyId };
  }

  async #info(tenant: string, keyId: string): Promise<ApiKeyInfo> {
    const item = await this.keys.getKey(tenant, keyId);
    if (!item) throw new UnauthorizedError(INVALID);
    return keyInfo(item);
  }

  async list(tenant: string): Promise<ApiKeyInfo[]> {
    return (await this.keys.listKeys(tenant)).map(keyInfo);
  }

  async revoke(tenant: string, keyId: string): Promise<void> {
    const existing = await this.keys.getKey(tenant, keyId);
    if (!existing) throw new NotFoundError("key", keyId);
    // The pointer first: from then on the key answers 401, even if the item's delete fails.
    await this.keys.deletePointer(existing.hash);
    await this.keys.deleteKey(tenant, keyId);
  }
}

function keyInfo(item: ApiKeyRecord): ApiKeyInfo {
  return { key_id: item.key_id, name: item.name, prefix: item.prefix, created_at: item.created_at };
}

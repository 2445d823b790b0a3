/**
 * The key that seals tool sources' secret headers at rest in local mode: 32 random
 * bytes in `{dataDir}/secrets.key` (mode 0600), made on first start; a stack that
 * keeps nothing (`dataDir` null, the tests) gets a key for its life only.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function localSecretKey(dataDir: string | null): Uint8Array {
  if (dataDir === null) return randomBytes(32);
  const path = join(dataDir, "secrets.key");
  if (existsSync(path)) {
    const key = readFileSync(path);
    if (key.length !== 32)
      throw new Error(
        `${path} must hold 32 bytes; delete it to make a new key (sealed secrets are then lost)`,
      );
    return key;
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(path, key, { mode: 0o600, flag: "wx" });
  return key;
}

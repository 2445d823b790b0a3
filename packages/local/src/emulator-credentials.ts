/**
 * The credentials the embedded emulators accept, and the only ones: a random
 * access key id and secret per data folder, in `{dataDir}/emulator-credentials.json`
 * (mode 0600), made on first start. A stack that keeps nothing (`dataDir` null,
 * the tests) gets a pair for its life only.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EmulatorCredentials } from "./sigv4-check";

/** Reads the data folder's emulator credentials, or makes them. */
export function emulatorCredentials(dataDir: string | null): EmulatorCredentials {
  if (dataDir === null) return fresh();
  const path = join(dataDir, "emulator-credentials.json");
  if (existsSync(path)) {
    const stored = JSON.parse(readFileSync(path, "utf8")) as Partial<EmulatorCredentials>;
    if (typeof stored.accessKeyId !== "string" || typeof stored.secretAccessKey !== "string") {
      throw new Error(
        `${path} must hold {"accessKeyId": ..., "secretAccessKey": ...}; delete it to make new ones`,
      );
    }
    return { accessKeyId: stored.accessKeyId, secretAccessKey: stored.secretAccessKey };
  }
  mkdirSync(dataDir, { recursive: true });
  const made = fresh();
  writeFileSync(path, `${JSON.stringify(made)}\n`, { mode: 0o600, flag: "wx" });
  return made;
}

function fresh(): EmulatorCredentials {
  return {
    // The shape of an AWS key id, so that tools which check it accept it.
    accessKeyId: `AKIALOCAL${randomBytes(6).toString("hex").toUpperCase()}`,
    // Letters and digits only: the emulators break on other characters (client-config.ts).
    secretAccessKey: randomBytes(30).toString("hex"),
  };
}

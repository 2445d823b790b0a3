/**
 * Where the API is and which key to send: `STACKVM_URL` (default the local stack
 * at http://127.0.0.1:3000) and `STACKVM_API_KEY` (default: the key `npm start`
 * keeps in `.stackvm/api-key` at the project root, or under `STACKVM_DATA_DIR`).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const DEFAULT_URL = "http://127.0.0.1:3000";

/** The project root: this file is packages/cli/src/config.ts. */
const root = resolve(import.meta.dirname, "../../..");

export interface CliConfig {
  url: string;
  /** The tenant's key, or null when none is configured (commands that need one say so). */
  apiKey: string | null;
  /** Where the key came from, for error messages. */
  apiKeySource: string;
  /** The operator key (`STACKVM_ADMIN_KEY`), for `keys create --tenant`. */
  adminKey: string | null;
}

export function loadCliConfig(env: Record<string, string | undefined>): CliConfig {
  const url = (env.STACKVM_URL || DEFAULT_URL).replace(/\/+$/, "");
  const adminKey = env.STACKVM_ADMIN_KEY || null;
  if (env.STACKVM_API_KEY) {
    return { url, apiKey: env.STACKVM_API_KEY.trim(), apiKeySource: "STACKVM_API_KEY", adminKey };
  }
  const file = join(resolve(root, env.STACKVM_DATA_DIR ?? ".stackvm"), "api-key");
  if (existsSync(file)) {
    const key = readFileSync(file, "utf8").trim();
    if (key) return { url, apiKey: key, apiKeySource: file, adminKey };
  }
  return { url, apiKey: null, apiKeySource: "none", adminKey };
}

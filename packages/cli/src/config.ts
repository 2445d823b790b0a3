/**
 * Where the API is and which key to send. The URL: `STACKVM_URL`, else the
 * address the local stack wrote in its data folder when it started
 * (`.stackvm/stack.json` at the project root, or under `STACKVM_DATA_DIR`, while
 * its process runs), else `http://127.0.0.1:$PORT`, else the local stack's
 * default http://127.0.0.1:3000. The key: `STACKVM_API_KEY`, else the one
 * `npm start` keeps in the data folder's `api-key`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const DEFAULT_URL = "http://127.0.0.1:3000";
/** The file in the data folder where `npm start` writes where it listens (see packages/local/src/main.ts). */
export const STACK_FILE = "stack.json";

/** The project root: this file is packages/cli/src/config.ts. */
const root = resolve(import.meta.dirname, "../../..");

export interface CliConfig {
  url: string;
  /** Where the URL came from, for error messages: `STACKVM_URL`, the stack's file, `PORT` or the default. */
  urlSource: string;
  /** The tenant's key, or null when none is configured (commands that need one say so). */
  apiKey: string | null;
  /** Where the key came from, for error messages. */
  apiKeySource: string;
  /** The operator key (`STACKVM_ADMIN_KEY`), for `keys create --tenant`. */
  adminKey: string | null;
}

export function loadCliConfig(env: Record<string, string | undefined>): CliConfig {
  const dataDir = resolve(root, env.STACKVM_DATA_DIR || ".stackvm");
  const { url: where, urlSource } = stackUrl(env, dataDir);
  const url = where.replace(/\/+$/, "");
  const adminKey = env.STACKVM_ADMIN_KEY || null;
  const found = { url, urlSource, adminKey };
  if (env.STACKVM_API_KEY) {
    return { ...found, apiKey: env.STACKVM_API_KEY.trim(), apiKeySource: "STACKVM_API_KEY" };
  }
  const file = join(dataDir, "api-key");
  if (existsSync(file)) {
    const key = readFileSync(file, "utf8").trim();
    if (key) return { ...found, apiKey: key, apiKeySource: file };
  }
  return { ...found, apiKey: null, apiKeySource: "none" };
}

/** The API's URL and where it was found. */
function stackUrl(
  env: Record<string, string | undefined>,
  dataDir: string,
): { url: string; urlSource: string } {
  if (env.STACKVM_URL) return { url: env.STACKVM_URL, urlSource: "STACKVM_URL" };
  const file = join(dataDir, STACK_FILE);
  const written = readStackFile(file);
  if (written) return { url: written, urlSource: file };
  const port = env.PORT?.trim();
  if (port && /^\d{1,5}$/.test(port) && Number(port) > 0 && Number(port) <= 65535) {
    return { url: `http://127.0.0.1:${Number(port)}`, urlSource: "PORT" };
  }
  return { url: DEFAULT_URL, urlSource: "the default" };
}

/**
 * The URL in the stack's file, when the file is whole and the process that
 * wrote it still runs (a stack killed without stopping leaves its file behind).
 */
function readStackFile(file: string): string | null {
  if (!existsSync(file)) return null;
  let written: unknown;
  try {
    written = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
  if (typeof written !== "object" || written === null) return null;
  const { url, pid } = written as { url?: unknown; pid?: unknown };
  if (typeof url !== "string" || !/^https?:\/\/[^\s]+$/.test(url)) return null;
  if (typeof pid === "number" && Number.isInteger(pid) && pid > 0 && !running(pid)) return null;
  return url;
}

/** Whether a process runs (signal 0 tests without sending; EPERM: it runs as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

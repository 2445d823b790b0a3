/**
 * Which API key `npm run eval -- --url URL` sends, and only where it is meant
 * to go. `--api-key` and `STACKVM_API_KEY` are the developer's explicit choice
 * for that URL. The key in `.stackvm/api-key` is the one the local stack wrote
 * for itself: it is sent only to a stack on this machine, so that `--url` naming
 * another host never carries the local stack's key there unasked.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { isLoopbackHost } from "@stackvm/core";

/** A mistake in how the eval was asked for: said with the usage. */
export class UsageError extends Error {}

/**
 * The key for `url`: `given`, else `STACKVM_API_KEY`, else the local stack's key
 * file when `url` is on this machine; a `UsageError` that says what to pass otherwise.
 *
 * @example
 * await evalApiKey("https://stack.example.com", undefined, {}, ".stackvm/api-key") // throws: pass --api-key
 */
export async function evalApiKey(
  url: string,
  given: string | undefined,
  env: Record<string, string | undefined>,
  keyFile: string,
): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(
      `--url ${url} is not a URL: give the stack's origin, e.g. http://localhost:3000`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(
      `--url ${url} is not an http(s) URL: give the stack's origin, e.g. http://localhost:3000`,
    );
  }
  if (parsed.username || parsed.password) {
    throw new UsageError(
      `--url must not carry a user name or password: pass the key with --api-key`,
    );
  }
  if (given) return given;
  if (env.STACKVM_API_KEY) return env.STACKVM_API_KEY.trim();
  if (!isLoopbackHost(parsed.hostname)) {
    throw new UsageError(
      `no API key for ${parsed.host}: ${keyFile} holds the local stack's key and is sent only to a stack on this machine; pass --api-key or set STACKVM_API_KEY`,
    );
  }
  if (existsSync(keyFile)) return (await readFile(keyFile, "utf8")).trim();
  throw new UsageError(
    `no API key: pass --api-key, set STACKVM_API_KEY, or start the stack with npm start (it writes ${keyFile})`,
  );
}

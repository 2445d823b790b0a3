/**
 * `npm start`: runs the whole system on this machine with no AWS account and no
 * Docker. Data lives under STACKVM_DATA_DIR (default `.stackvm/` at the project
 * root) and survives restarts. Ctrl-C stops everything cleanly.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ConfigError } from "@stackvm/functions";
import { consoleLog, type LogLevel } from "./console-log";
import { startLocalStack } from "./stack";

const root = resolve(import.meta.dirname, "../../..");
const env = process.env;
const dataDir = resolve(root, env.STACKVM_DATA_DIR ?? ".stackvm");
const log = consoleLog({
  level: (env.LOG_LEVEL as LogLevel | undefined) ?? "info",
  pretty: process.stdout.isTTY === true,
});

/** The bootstrap key: STACKVM_BOOTSTRAP_API_KEY, or one made once and kept in the data folder. */
async function bootstrapKey(): Promise<{ key: string | null; file: string; created: boolean }> {
  const file = join(dataDir, "api-key");
  if (env.STACKVM_BOOTSTRAP_API_KEY)
    return { key: env.STACKVM_BOOTSTRAP_API_KEY, file, created: false };
  if (existsSync(file)) return { key: (await readFile(file, "utf8")).trim(), file, created: false };
  return { key: null, file, created: true };
}

async function main() {
  await mkdir(dataDir, { recursive: true });
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be a port number, not '${env.PORT}'`);
  }
  const boot = await bootstrapKey();
  const stack = await startLocalStack({
    dataDir,
    port,
    env,
    log,
    bootstrapApiKey: boot.key,
    concurrency: Number(env.STACKVM_WORKER_CONCURRENCY ?? 4),
  });
  if (boot.created) {
    await writeFile(boot.file, `${stack.apiKey}\n`);
    await chmod(boot.file, 0o600);
  }
  process.stdout.write(
    `\nStackVM Serverless is running at ${stack.url}\n` +
      `  console:  ${stack.url}/ui\n  API docs: ${stack.url}/docs\n` +
      (env.STACKVM_BOOTSTRAP_API_KEY
        ? "  API key:  STACKVM_BOOTSTRAP_API_KEY (tenant 'local')\n"
        : `  API key:  ${stack.apiKey}  (tenant 'local'; kept in ${boot.file})\n`) +
      "Press Ctrl-C to stop.\n\n",
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await stack.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : (error as Error).stack;
  process.stderr.write(`StackVM could not start: ${message}\n`);
  process.exit(1);
});

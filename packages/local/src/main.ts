/**
 * `npm start`: runs the whole system on this machine with no AWS account and no
 * Docker. Data lives under STACKVM_DATA_DIR (default `.stackvm/` at the project
 * root) and survives restarts.
 *
 * As a service: `npm start` execs one Node process (tsx is a loader in it, not a
 * wrapper process), so SIGTERM or SIGINT to npm (which forwards them) or to Node
 * stops it cleanly: requests in flight finish, steps in flight finish or come
 * back to the queue, nothing is left running. If npm dies without forwarding
 * (SIGKILL), the stack notices it lost its parent and stops too. One stack per
 * data folder; a wrong setting, a busy port or a taken folder ends the start
 * with one line naming it. While it runs, `stack.json` in the data folder says
 * where it listens (`{"url", "port", "pid"}`), so the CLI finds it on any PORT.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ConfigError } from "@stackvm/functions";
import { consoleLog } from "./console-log";
import { DataFolderBusyError, type DataLock, lockDataFolder } from "./data-lock";
import { llmBannerLines } from "./llm-summary";
import { readLocalSettings } from "./local-settings";
import { startLocalStack } from "./stack";

const root = resolve(import.meta.dirname, "../../..");
/** The data folder's file that says where the stack listens: `{"url", "port", "pid"}`. */
const STACK_FILE = "stack.json";
const env = process.env;

/** The bootstrap key: STACKVM_BOOTSTRAP_API_KEY, or one made once and kept in the data folder. */
async function bootstrapKey(
  dataDir: string,
  given: string | null,
): Promise<{ key: string | null; file: string; created: boolean }> {
  const file = join(dataDir, "api-key");
  if (given) return { key: given, file, created: false };
  if (existsSync(file)) return { key: (await readFile(file, "utf8")).trim(), file, created: false };
  return { key: null, file, created: true };
}

let lock: DataLock | null = null;

async function main() {
  const settings = readLocalSettings(env, root);
  const log = consoleLog({ level: settings.logLevel, pretty: process.stdout.isTTY === true });
  await mkdir(settings.dataDir, { recursive: true });
  lock = await lockDataFolder(settings.dataDir);
  const boot = await bootstrapKey(settings.dataDir, settings.bootstrapApiKey);
  const stack = await startLocalStack({
    dataDir: settings.dataDir,
    port: settings.port,
    env,
    log,
    bootstrapApiKey: boot.key,
    concurrency: settings.concurrency,
  });
  if (boot.created) {
    await writeFile(boot.file, `${stack.apiKey}\n`);
    await chmod(boot.file, 0o600);
  }
  // Where this stack listens, for the CLI (packages/cli/src/config.ts): it finds a stack on any PORT.
  const stackFile = join(settings.dataDir, STACK_FILE);
  await writeFile(
    stackFile,
    `${JSON.stringify({ url: stack.url, port: stack.port, pid: process.pid })}\n`,
  );
  // Stopped cleanly from the moment the banner says it runs: a signal before the
  // handlers are in place would end the process at once, without stopping what it started.
  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { reason });
    // Requests get up to 29 s to finish, steps 5 s (then they come back to the queue); this is the backstop.
    const force = setTimeout(() => process.exit(1), 45_000);
    force.unref();
    await stack.stop();
    await rm(stackFile, { force: true });
    await lock?.release();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGHUP", () => void stop("SIGHUP"));
  process.stdout.write(
    `\nStackVM Serverless is running at ${stack.url}\n` +
      `  console:  ${stack.url}/ui\n  API docs: ${stack.url}/docs\n` +
      (settings.bootstrapApiKey
        ? "  API key:  STACKVM_BOOTSTRAP_API_KEY (tenant 'local')\n"
        : `  API key:  ${stack.apiKey}  (tenant 'local'; kept in ${boot.file})\n`) +
      `${llmBannerLines(stack.llm).join("\n")}\n` +
      `Press Ctrl-C to stop (pid ${process.pid}).\n\n`,
  );
  // npm killed with SIGKILL cannot forward a signal: its child is re-parented.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void stop("the parent process exited");
  }, 1_000).unref();
}

main().catch(async (error: unknown) => {
  const known = error instanceof ConfigError || error instanceof DataFolderBusyError;
  process.stderr.write(
    `StackVM could not start: ${known ? error.message : (error as Error).stack}\n`,
  );
  await lock?.release();
  process.exit(1);
});

/**
 * Runs the `stackvm` command as a process, as a user runs it: its own Node, the
 * project as the working folder, stdout and stderr collected.
 */
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "packages/cli/bin/stackvm.js");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with `env` over this process's (no operator key unless given); `onStdout` sees the output as it comes. */
export function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  onStdout?: (soFar: string) => void,
): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, STACKVM_ADMIN_KEY: undefined, COLUMNS: undefined, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      onStdout?.(stdout);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

/**
 * The CLI finds the stack `npm start` runs with no STACKVM_URL: a stack on a
 * port of its own (not 3000) writes where it listens in its data folder
 * (`stack.json`), and the CLI, a process with only STACKVM_DATA_DIR, reads it
 * and the key beside it. Without the file it tries `PORT`; a file left by a
 * stack that died (its pid gone) is not believed; the file goes when the stack
 * stops; STACKVM_URL wins over all.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";

const root = resolve(import.meta.dirname, "../..");
let dataDir: string;
let emptyDir: string;
let child: ChildProcess | null = null;
let url: string;
let key: string;

/** `npm start` as a process: the stack's own main, on a port the system picks. */
function start(): Promise<{ child: ChildProcess; url: string }> {
  const started = spawn(process.execPath, ["--import", "tsx", "packages/local/src/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      PORT: "0",
      STACKVM_DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      OPENAI_API_KEY: "unused",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((done, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`no start within 60 s: ${out}`)), 60_000);
    started.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /running at (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        done({ child: started, url: match[1]! });
      }
    });
    started.stderr!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    started.on("exit", (code) => fail(new Error(`exited with ${code} before it started: ${out}`)));
  });
}

function stop(process: ChildProcess): Promise<number | null> {
  return new Promise((done) => {
    process.once("exit", (code) => done(code));
    process.kill("SIGINT");
  });
}

/** The CLI with none of the settings a user may have: only what a test gives. */
const cli = (args: string[], env: Record<string, string | undefined>) =>
  runCli(args, { STACKVM_URL: undefined, STACKVM_API_KEY: undefined, PORT: undefined, ...env });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "stackvm-find-"));
  emptyDir = await mkdtemp(join(tmpdir(), "stackvm-find-empty-"));
  ({ child, url } = await start());
  key = (await readFile(join(dataDir, "api-key"), "utf8")).trim();
}, 90_000);
afterAll(async () => {
  if (child && child.exitCode === null) await stop(child);
  await rm(dataDir, { recursive: true, force: true });
  await rm(emptyDir, { recursive: true, force: true });
});

describe("the CLI finds the local stack", () => {
  it("reads where the stack listens from its data folder, and its key", async () => {
    expect(url).not.toBe("http://127.0.0.1:3000");
    const written = JSON.parse(await readFile(join(dataDir, "stack.json"), "utf8"));
    expect(written).toEqual({ url, port: Number(new URL(url).port), pid: child!.pid });
    const made = await fetch(`${url}/v1/tasks`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "found",
        plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }],
      }),
    });
    expect(made.status).toBe(202);
    const { task_id } = (await made.json()) as { task_id: string };
    const run = await cli(["tasks", "--json"], { STACKVM_DATA_DIR: dataDir });
    expect(run.code, run.stderr).toBe(0);
    const listed = JSON.parse(run.stdout) as { tasks: { task_id: string }[] };
    expect(listed.tasks.map((t) => t.task_id)).toContain(task_id);
  });

  it("tries PORT when the data folder names no stack", async () => {
    const port = new URL(url).port;
    const run = await cli(["tasks", "--json"], {
      STACKVM_DATA_DIR: emptyDir,
      STACKVM_API_KEY: key,
      PORT: port,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).tasks.length).toBeGreaterThan(0);
  });

  it("does not believe a file left by a stack that died, and says where the address came from", async () => {
    const stale = await mkdtemp(join(tmpdir(), "stackvm-find-stale-"));
    try {
      // A pid no process has (above Linux's pid_max), on a port nothing listens on.
      await writeFile(
        join(stale, "stack.json"),
        JSON.stringify({ url: "http://127.0.0.1:9", port: 9, pid: 99_999_999 }),
      );
      const port = new URL(url).port;
      const found = await cli(["tasks", "--json"], {
        STACKVM_DATA_DIR: stale,
        STACKVM_API_KEY: key,
        PORT: port,
      });
      expect(found.code, found.stderr).toBe(0);
      // A file that is not JSON is passed over as well.
      await writeFile(join(stale, "stack.json"), "{not json");
      const down = await cli(["tasks"], {
        STACKVM_DATA_DIR: stale,
        STACKVM_API_KEY: key,
        PORT: "9",
      });
      expect(down.code).not.toBe(0);
      expect(down.stderr).toMatch(
        /cannot reach StackVM at http:\/\/127\.0\.0\.1:9 \([^;]+; the address from PORT\)/,
      );
    } finally {
      await rm(stale, { recursive: true, force: true });
    }
  });

  it("lets STACKVM_URL win over the stack's file", async () => {
    const run = await cli(["tasks"], {
      STACKVM_DATA_DIR: dataDir,
      STACKVM_URL: "http://127.0.0.1:9",
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("cannot reach StackVM at http://127.0.0.1:9");
    expect(run.stderr).toContain("the address from STACKVM_URL");
  });

  it("removes the file when the stack stops", async () => {
    expect(await stop(child!)).toBe(0);
    await expect(readFile(join(dataDir, "stack.json"), "utf8")).rejects.toThrow(/ENOENT/);
  });
});

/**
 * `npm start` as a service (issue 13, finding 5): a signal to any of its
 * processes stops all of them, one stack per data folder, and a busy port or a
 * bad setting ends the start with one line naming it, not a stack trace.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "stackvm-service-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

/** Runs `command` in a process group of its own, as a service manager would. */
function run(command: string, args: string[], env: Record<string, string>): Started {
  const child = spawn(command, args, {
    cwd: root,
    detached: true,
    env: { ...process.env, PORT: "0", STACKVM_DATA_DIR: dataDir, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, out: () => out, exited };
}

const npmStart = (env: Record<string, string> = {}) => run("npm", ["start"], env);
const nodeStart = (env: Record<string, string> = {}) =>
  run(process.execPath, ["--import", "tsx", "packages/local/src/main.ts"], env);

async function running(started: Started): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const match = /running at (http:\/\/\S+)/.exec(started.out());
    if (match) return match[1]!;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no start within 60 s: ${started.out()}`);
}

/** The pids of live processes in the process group. */
function group(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // fields[0] is the state (Z: a zombie, already dead), fields[2] the group.
      if (Number(fields[2]) === pgid && fields[0] !== "Z") pids.push(Number(entry));
    } catch {
      // It ended while we read.
    }
  }
  return pids;
}

/** The Node process that runs the stack, a child of npm. */
function stackPid(pgid: number): number {
  for (const pid of group(pgid)) {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    if (cmdline.some((arg) => arg.endsWith("local/src/main.ts"))) return pid;
  }
  throw new Error("no stack process in the group");
}

async function empty(pgid: number): Promise<number[]> {
  for (let i = 0; i < 300 && group(pgid).length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return group(pgid);
}

describe("npm start as a service", () => {
  it.each([
    ["SIGTERM", "npm"],
    ["SIGINT", "npm"],
    ["SIGTERM", "node"],
  ] as const)(
    "stops with nothing left when %s goes to %s",
    async (signal, target) => {
      const started = npmStart();
      const url = await running(started);
      const pgid = started.child.pid!;
      expect((await fetch(`${url}/healthz`)).ok).toBe(true);
      process.kill(target === "npm" ? pgid : stackPid(pgid), signal);
      expect(await empty(pgid)).toEqual([]);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    },
    120_000,
  );

  it("refuses a second stack on the same data folder, naming the first", async () => {
    const first = nodeStart();
    await running(first);
    const second = nodeStart();
    expect(await second.exited).toBe(1);
    expect(second.out()).toContain(`another StackVM (pid ${first.child.pid}) is running`);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    // Once the first has stopped, the folder is free.
    const third = nodeStart();
    await running(third);
    third.child.kill("SIGTERM");
    expect(await third.exited).toBe(0);
  }, 120_000);

  it("names a busy port in one line", async () => {
    const busy: Server = createServer();
    await new Promise<void>((done) => busy.listen(0, "127.0.0.1", done));
    const port = (busy.address() as { port: number }).port;
    try {
      const started = nodeStart({ PORT: String(port) });
      expect(await started.exited).toBe(1);
      expect(started.out()).toContain(`PORT: 127.0.0.1:${port} is in use by another program`);
      expect(started.out()).not.toMatch(/\n\s+at /);
      expect(group(started.child.pid!)).toEqual([]);
    } finally {
      busy.close();
    }
  }, 120_000);

  it("names every bad setting at once, with no stack trace", async () => {
    const started = nodeStart({
      STACKVM_BOOTSTRAP_API_KEY: "short",
      STACKVM_WORKER_CONCURRENCY: "0",
      LOG_LEVEL: "loud",
      STACKVM_MAX_RUNNING_TASKS: "many",
    });
    expect(await started.exited).toBe(1);
    const out = started.out();
    expect(out).toMatch(/^StackVM could not start: bad configuration: /);
    for (const name of [
      "STACKVM_BOOTSTRAP_API_KEY",
      "STACKVM_WORKER_CONCURRENCY",
      "LOG_LEVEL",
      "STACKVM_MAX_RUNNING_TASKS",
    ]) {
      expect(out).toContain(name);
    }
    expect(out).not.toMatch(/\n\s+at /);
  }, 60_000);
});

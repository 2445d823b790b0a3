import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_SANDBOX_LIMITS } from "@stackvm/core/sandbox-protocol";
import { afterEach, describe, expect, it } from "vitest";
import { findExecutable } from "../host-tools";
import { processesOf, selfAndAncestors, sweepInstance } from "./instance-sweep";
import { PythonEngine } from "./python-engine";

// A warm Lambda instance, as far as it can be played off AWS: the runner's user
// is played by a user id of its own (the tests run as root), whose processes are
// what a hostile run left behind: a setsid, a double fork, a process that
// changed its group. The sweep must leave none of them and no file.
const INSTANCE_UID = 64_200;
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  spawnSync("/usr/bin/pkill", ["-KILL", "-U", String(INSTANCE_UID)]);
});

function leaveBehind(command: string): void {
  const child = spawn("/bin/sh", ["-c", command], {
    uid: INSTANCE_UID,
    gid: INSTANCE_UID,
    detached: true,
    stdio: "ignore",
  });
  child.unref();
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await check()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("sweepInstance", () => {
  it("kills every process of the user however it detached, and keeps the runner", async () => {
    expect(process.getuid?.()).toBe(0);
    leaveBehind("/usr/bin/setsid /usr/bin/sleep 311 &");
    leaveBehind("(/usr/bin/sleep 312 &) ; exit 0");
    leaveBehind("exec /usr/bin/sleep 313");
    await until(async () => (await processesOf(INSTANCE_UID)).length >= 3);
    expect((await processesOf(INSTANCE_UID)).length).toBeGreaterThanOrEqual(3);

    const report = await sweepInstance({
      uid: INSTANCE_UID,
      keep: await selfAndAncestors(),
      dirs: [],
    });

    expect(report.killed.length).toBeGreaterThanOrEqual(3);
    await until(async () => (await processesOf(INSTANCE_UID)).length === 0);
    expect(await processesOf(INSTANCE_UID)).toEqual([]);
    // The runner (this process) is alive and was never a candidate.
    expect(report.killed).not.toContain(process.pid);
  });

  it("keeps the processes it is told to keep", async () => {
    leaveBehind("exec /usr/bin/sleep 314");
    await until(async () => (await processesOf(INSTANCE_UID)).length === 1);
    const [kept] = await processesOf(INSTANCE_UID);
    const report = await sweepInstance({
      uid: INSTANCE_UID,
      keep: new Set([kept as number]),
      dirs: [],
    });
    expect(report.killed).toEqual([]);
    expect(await processesOf(INSTANCE_UID)).toEqual([kept]);
  });

  it("empties the writable folders, hidden files and folders too, and keeps the folders", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stackvm-instance-tmp-"));
    dirs.push(dir);
    writeFileSync(join(dir, "left-by-tenant-a.txt"), "secret");
    writeFileSync(join(dir, ".hidden"), "x");
    mkdirSync(join(dir, "nested", "deeper"), { recursive: true });
    writeFileSync(join(dir, "nested", "deeper", "f"), "x");

    const report = await sweepInstance({ uid: INSTANCE_UID, keep: new Set(), dirs: [dir] });

    expect(report.removed).toBe(3);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses, rather than goes on, when a process outlives every kill pass", async () => {
    // A process table in which one process of the user never dies (it cannot be
    // killed, or forks faster than it dies): the sweep must not report a clean instance.
    const proc = mkdtempSync(join(tmpdir(), "stackvm-instance-proc-"));
    dirs.push(proc);
    const pid = 4_194_000 + (process.pid % 100);
    mkdirSync(join(proc, String(pid)));
    writeFileSync(
      join(proc, String(pid), "status"),
      `Name:\tsleep\nState:\tS (sleeping)\nUid:\t${INSTANCE_UID}\t${INSTANCE_UID}\t${INSTANCE_UID}\t${INSTANCE_UID}\n`,
    );
    const dir = mkdtempSync(join(tmpdir(), "stackvm-instance-tmp-"));
    dirs.push(dir);
    await expect(
      sweepInstance({ uid: INSTANCE_UID, keep: new Set(), dirs: [dir], proc }),
    ).rejects.toThrow(/could not end every process/);
  });

  it("finds the runner's ancestors, so a sweep never kills what started it", async () => {
    const keep = await selfAndAncestors();
    expect(keep.has(process.pid)).toBe(true);
    expect(keep.has(process.ppid)).toBe(true);
  });
});

describe("the Python engine on a warm instance", () => {
  it("sweeps after every run, before the child of the next run starts", async () => {
    const events: string[] = [];
    const engine = new PythonEngine({
      prlimit: findExecutable("prlimit"),
      unshare: null,
      bubblewrap: null,
      sweep: async () => {
        events.push("sweep");
      },
    });
    try {
      const limits = { ...DEFAULT_SANDBOX_LIMITS, time_ms: 8_000 };
      const request = {
        v: 1 as const,
        language: "python" as const,
        code: "1 + 1",
        inputs: {},
        files: [],
        limits: {},
      };
      for (let run = 0; run < 2; run++) {
        const outcome = await engine.run(request, limits);
        events.push(`run ${String(outcome.result)}`);
      }
    } finally {
      await engine.close();
    }
    expect(events).toEqual(["sweep", "run 2", "sweep", "run 2"]);
  });

  it("starts no further child once a sweep failed", async () => {
    let sweeps = 0;
    const engine = new PythonEngine({
      prlimit: findExecutable("prlimit"),
      unshare: null,
      bubblewrap: null,
      sweep: async () => {
        sweeps++;
        throw new Error("a process survived");
      },
    });
    const request = {
      v: 1 as const,
      language: "python" as const,
      code: "1 + 1",
      inputs: {},
      files: [],
      limits: {},
    };
    const limits = { ...DEFAULT_SANDBOX_LIMITS, time_ms: 8_000 };
    try {
      await expect(engine.run(request, limits)).rejects.toThrow(/survived/);
      await expect(engine.run(request, limits)).rejects.toThrow(/survived/);
    } finally {
      await engine.close();
    }
    expect(sweeps).toBe(1);
  });
});

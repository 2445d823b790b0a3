/**
 * What keeps a warm Lambda instance clean between runs. Lambda gives no
 * namespaces and one user id to the runner and its children, and reuses the
 * instance for the next invocation, which may be another tenant's. So after each
 * Python run, before the next child starts, the runner:
 *
 * - kills every process of its own user that is not itself or one of its
 *   ancestors: whatever a run left behind (a double fork, a `setsid`, a process
 *   that changed its group) dies, however it detached;
 * - empties the writable folders (`/tmp` on Lambda), so no file of one run is
 *   seen by the next.
 *
 * The kill pass repeats until a pass finds nothing, so a process that forks
 * while it is being killed does not outrun it (its children count against the
 * child's process limit); if one is still there after the last pass, the sweep
 * throws, and the engine starts no further child on this instance.
 */
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";

export interface SweepOptions {
  /** The user whose processes go. */
  uid: number;
  /** Processes that stay: the runner and its ancestors. */
  keep: ReadonlySet<number>;
  /** Folders whose contents go (the folders themselves stay). */
  dirs: readonly string[];
  /** Where the process table is read (tests point it elsewhere only to fail it). */
  proc?: string;
}

export interface SweepReport {
  killed: number[];
  removed: number;
}

const MAX_PASSES = 20;

/**
 * Kills the user's stray processes and empties the folders.
 *
 * @example
 * await sweepInstance({ uid: process.getuid(), keep: runnerAndAncestors(), dirs: ["/tmp"] });
 */
export async function sweepInstance(options: SweepOptions): Promise<SweepReport> {
  const proc = options.proc ?? "/proc";
  const killed: number[] = [];
  let strays: number[] = [];
  for (let pass = 0; pass <= MAX_PASSES; pass++) {
    strays = (await processesOf(options.uid, proc)).filter((pid) => !options.keep.has(pid));
    if (strays.length === 0 || pass === MAX_PASSES) break;
    for (const pid of strays) {
      try {
        process.kill(pid, "SIGKILL");
        killed.push(pid);
      } catch {
        // Gone already, or not ours to kill.
      }
    }
    // Give the kernel a moment to reap before the next look.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (strays.length > 0) {
    // A process that outlives every pass (it forks faster than it dies, or it
    // cannot be killed) would meet the next run: refuse, rather than go on.
    throw new Error(
      `the instance sweep could not end every process of the run (${strays.slice(0, 10).join(", ")} still alive after ${MAX_PASSES} passes)`,
    );
  }
  let removed = 0;
  for (const dir of options.dirs) {
    const entries = await readdir(dir).catch(() => [] as string[]);
    for (const entry of entries) {
      await rm(join(dir, entry), { recursive: true, force: true }).catch(() => {});
      removed++;
    }
  }
  return { killed, removed };
}

/** The live processes whose real user id is `uid` (zombies are already dead). */
export async function processesOf(uid: number, proc = "/proc"): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(join(proc, entry, "status"), "utf8").catch(() => "");
    const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    const state = /^State:\s+(\w)/m.exec(status)?.[1];
    if (real !== undefined && Number(real) === uid && state !== "Z" && state !== "X") {
      pids.push(Number(entry));
    }
  }
  return pids;
}

/** This process and every ancestor up to the first, read from the process table. */
export async function selfAndAncestors(proc = "/proc"): Promise<Set<number>> {
  const keep = new Set<number>();
  let pid = process.pid;
  while (pid > 0 && !keep.has(pid)) {
    keep.add(pid);
    const stat = await readFile(join(proc, String(pid), "stat"), "utf8").catch(() => "");
    const close = stat.lastIndexOf(")");
    if (close < 0) break;
    pid = Number(stat.slice(close + 2).split(" ")[1]);
  }
  return keep;
}

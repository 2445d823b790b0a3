/**
 * How a data engine child is started: CPython from the system's packages, in
 * the bubblewrap boundary the Pyodide children get (namespaces, a user of the
 * pool, a read-only view of the system folders, a private `/tmp`, no `/etc`, no
 * `/proc`, no environment), with the same rlimits, and a seccomp filter that
 * bwrap installs before CPython starts (`seccomp.ts`).
 */
import { existsSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Bubblewrap, boundaryArgs, DEFAULT_RLIMITS } from "./containment";
import { DATA_CHILD } from "./data-child-py";
import { type ChildSpawn, UID_POOL } from "./pyodide-process";
import { SECCOMP_PRELUDE } from "./seccomp-py";

/** The system's CPython, which Debian's python3-numpy and the others are built for. */
export const SYSTEM_PYTHON = "/usr/bin/python3";

/** Where the data child's seccomp program comes in (bwrap reads it, then closes it). */
export const SECCOMP_FD = 3;

/** What a data child needs from the host. */
export interface DataLaunch {
  python: string;
  prlimit: string | null;
  /**
   * The boundary; null on the data function on Lambda, where the instance is
   * the boundary and serves one run (no user namespaces there for bwrap).
   */
  bubblewrap: Bubblewrap | null;
  /** Host files bound read-only, beyond the system folders (see `dataBinds`). */
  binds: ReadonlyArray<readonly [string, string]>;
  /**
   * A seccomp program comes on `SECCOMP_FD`: bwrap installs it, or, without
   * bwrap, the child itself before anything else (`seccomp-py.ts`).
   */
  seccomp: boolean;
  /** Whether the filter leaves internet sockets alone (default true; false without bwrap). */
  inetSockets?: boolean;
}

/** A data child's limits, as a Pyodide child's. */
export interface DataRun {
  dataBytes: number;
  /** RLIMIT_AS: shared mappings (mmap, memfd, SysV shm) are outside the data limit. */
  addressBytes?: number;
  cpuSeconds: number;
  uidSlot?: number;
}

/**
 * The command line of a data child: the rlimits, bwrap with the boundary, then
 * CPython in isolated mode (`-I`: no environment, no user site, no script
 * folder on the path; `-B`: no bytecode written).
 */
export function dataChildCommand(launch: DataLaunch, run: DataRun): ChildSpawn {
  const limits = launch.prlimit
    ? [
        launch.prlimit,
        `--nproc=${DEFAULT_RLIMITS.processes}`,
        `--nofile=${DEFAULT_RLIMITS.openFiles}`,
        `--fsize=${DEFAULT_RLIMITS.fileBytes}`,
        `--data=${run.dataBytes}`,
        ...(run.addressBytes === undefined ? [] : [`--as=${run.addressBytes}`]),
        `--cpu=${run.cpuSeconds}`,
        "--",
      ]
    : [];
  if (launch.bubblewrap === null) {
    // No namespaces: the child installs the filter itself, then runs as the runner's user.
    const child = launch.seccomp ? SECCOMP_PRELUDE + DATA_CHILD : DATA_CHILD;
    // Its folders go under the runner's temporary folder, which the sweep empties.
    return {
      command: [...limits, launch.python, "-I", "-B", "-c", child, tmpdir()],
      uid: null,
    };
  }
  const seccomp = launch.seccomp ? ["--seccomp", String(SECCOMP_FD)] : [];
  return {
    command: [
      ...limits,
      launch.bubblewrap.bwrap,
      ...boundaryArgs(launch.binds, seccomp),
      launch.python,
      "-I",
      "-B",
      "-c",
      DATA_CHILD,
    ],
    uid:
      launch.bubblewrap.uid === null
        ? null
        : launch.bubblewrap.uid + ((run.uidSlot ?? 0) % UID_POOL),
  };
}

/**
 * What a data child sees beyond the system folders. Debian picks its BLAS and
 * LAPACK through `/etc/alternatives` (`libblas.so.3` is a link into it), and the
 * child has no `/etc`: so each library link of the system that points there gets
 * the file it resolves to, at its `/etc/alternatives` name, and nothing else of
 * `/etc` is shown.
 */
export function dataBinds(
  libDirs: readonly string[] = multiarchLibDirs(),
): Array<[string, string]> {
  const binds = new Map<string, string>();
  for (const dir of libDirs) {
    for (const name of readdirSync(dir)) {
      if (!/\.so(\.\d+)*$/.test(name)) continue;
      let target: string;
      try {
        target = readlinkSync(join(dir, name));
      } catch {
        continue;
      }
      if (!target.startsWith("/etc/alternatives/") || binds.has(target)) continue;
      try {
        binds.set(target, realpathSync(join(dir, name)));
      } catch {
        // A dangling alternative: nothing to show.
      }
    }
  }
  return [...binds].map(([inside, host]) => [host, inside]);
}

function multiarchLibDirs(): string[] {
  return ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"].filter((dir) =>
    existsSync(dir),
  );
}

/**
 * The operating-system boundary around each Python child, made by bubblewrap
 * (`bwrap`, Debian's `bubblewrap` package). Pyodide's bridge reaches the child's
 * Node `process` by design and Node's permission model is not a security
 * boundary, so the boundary is the kernel's:
 *
 * - its own user, pid, ipc, mount, network, uts and cgroup namespaces: it cannot
 *   see, signal or trace a host process, reach a host socket (abstract ones
 *   live in the network namespace, path ones are not in its view), or learn the
 *   host's name;
 * - an unprivileged user id that owns nothing of the stack's (when the stack runs
 *   as root, the child is started as `sandboxUid`; otherwise it keeps the
 *   stack's id outside, with no capability and nothing of the stack's in view);
 * - a read-only view of only the system libraries, the Node binary, the child
 *   script and the Pyodide files, at neutral paths (`/sandbox/...`), an empty
 *   private `/tmp`, no `/etc`, no `/proc`, nothing of `/usr/local`, no environment;
 * - a new session (no terminal to inject into), no capabilities, and death with
 *   its parent: when bwrap dies, the namespace's first process dies, and the
 *   kernel kills every process left in the namespace with it.
 *
 * Descriptors: bwrap passes on what it inherits, so the sandbox host closes every
 * descriptor it inherited at start (`closeInheritedDescriptors`) and spawns
 * children with only their protocol pipes (and the snapshot, on fd 3).
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readlinkSync } from "node:fs";

/** Where the child's files appear inside the boundary. */
export const INSIDE = {
  root: "/sandbox",
  node: "/sandbox/node",
  script: "/sandbox/child/pyodide-child.ts",
  packageJson: "/sandbox/child/package.json",
  pyodide: "/sandbox/pyodide",
  /** Where the snapshot maker writes (bound read-write for that run only). */
  out: "/sandbox/out",
} as const;

/** The user id a root stack runs children as; it owns no file and no process of the stack. */
export const DEFAULT_SANDBOX_UID = 64_123;

/** The host paths bound into the boundary, read-only. */
export interface BoundFiles {
  node: string;
  script: string;
  packageJson: string;
  pyodide: string;
}

/** How children are contained: the bwrap binary, and the id to run as (null: keep ours). */
export interface Bubblewrap {
  bwrap: string;
  uid: number | null;
}

/** OS limits of a child, set before it starts (the data limit is tightened after boot). */
export interface ChildRlimits {
  /** RLIMIT_NPROC counts threads too: Node starts about a dozen. */
  processes: number;
  openFiles: number;
  fileBytes: number;
}

export const DEFAULT_RLIMITS: ChildRlimits = {
  processes: 256,
  openFiles: 256,
  fileBytes: 16 * 1024 * 1024,
};

/** The size of the child's private /tmp (bubblewrap's default is half the host's RAM). */
export const TMP_BYTES = 16 * 1024 * 1024;

/** Hidden under an empty folder: what the machine's owner installed and configured. */
const LOCAL_DIR = "/usr/local";

/** The system folders with the shared libraries Node needs; symlinks are kept as symlinks. */
const SYSTEM_DIRS = ["/usr", "/lib", "/lib64", "/bin", "/sbin"];

/** bwrap's arguments that give the fixed view: namespaces, identity, file system. */
export function bubblewrapArgs(files: BoundFiles, extra: string[] = []): string[] {
  return boundaryArgs(
    [
      [files.node, INSIDE.node],
      [files.script, INSIDE.script],
      [files.packageJson, INSIDE.packageJson],
      [files.pyodide, INSIDE.pyodide],
    ],
    extra,
  );
}

/**
 * The same boundary with other files bound read-only (host path, path inside):
 * the namespaces, identity, system folders, `/dev`, the private `/tmp`, then
 * `extra`. Both Python engines use it (Pyodide's child and the data engine's CPython).
 */
export function boundaryArgs(
  binds: ReadonlyArray<readonly [string, string]>,
  extra: string[] = [],
): string[] {
  const view: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) view.push("--symlink", readlinkSync(dir), dir);
    else if (stat.isDirectory()) view.push("--ro-bind", dir, dir);
  }
  // The machine's own installs and settings (`/usr/local/etc` holds npm's global
  // config, with registry tokens as often as not): an empty read-only folder.
  // Node needs only the system's libraries, and is bound on its own.
  if (existsSync(LOCAL_DIR) && lstatSync(LOCAL_DIR).isDirectory()) {
    view.push("--tmpfs", LOCAL_DIR, "--remount-ro", LOCAL_DIR);
  }
  return [
    "--unshare-user",
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup",
    "--uid",
    "65534",
    "--gid",
    "65534",
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--cap-drop",
    "ALL",
    ...view,
    ...binds.flatMap(([host, inside]) => ["--ro-bind", host, inside]),
    // No /proc: its bwrap pid 1 command line and every mountinfo name the host
    // paths of the bound files. Node and Pyodide run without it.
    "--dev",
    "/dev",
    // Both are tmpfs, in the host's RAM and outside every rlimit: /dev (the
    // devices are mounts of their own, still writable) is made read-only, and
    // /tmp, which the child itself never writes, gets a small fixed size.
    "--remount-ro",
    "/dev",
    "--size",
    String(TMP_BYTES),
    "--tmpfs",
    "/tmp",
    ...extra,
    // bwrap's own root is a tmpfs the child owns: writable and unbounded, in the
    // host's RAM like /tmp, and any folder bwrap made for a mount (`/etc` for the
    // data engine's BLAS) is on it. Read-only once every mount is in place.
    "--remount-ro",
    "/",
    "--chdir",
    "/tmp",
    "--",
  ];
}

/**
 * Finds out whether this machine can contain a child with bubblewrap, by starting
 * the real thing once (`node -e 0` inside the full boundary). Tries the
 * unprivileged `uid` first when running as root. Answers how, or why not.
 */
export function probeBubblewrap(
  bwrap: string | null,
  files: BoundFiles,
  uid: number,
): { ok: true; how: Bubblewrap } | { ok: false; why: string } {
  if (!bwrap) {
    return {
      ok: false,
      why: "bubblewrap is not installed (install the Debian or Ubuntu package `bubblewrap`, or your distribution's)",
    };
  }
  const tries: Array<number | null> = process.getuid?.() === 0 ? [uid, null] : [null];
  let last = "";
  for (const as of tries) {
    const result = spawnSync(bwrap, [...bubblewrapArgs(files), INSIDE.node, "-e", "0"], {
      env: {},
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 20_000,
      ...(as === null ? {} : { uid: as, gid: as }),
    });
    if (result.status === 0) return { ok: true, how: { bwrap, uid: as } };
    last = `${result.error?.message ?? ""}${result.stderr?.toString().trim() ?? ""}`.slice(0, 300);
  }
  return {
    ok: false,
    why: `bubblewrap cannot make the sandbox's namespaces here (${last || "it failed"}); it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 an AppArmor profile allowing bwrap) and, when the stack runs as root, files readable by uid ${uid}`,
  };
}

/**
 * One locked-down Pyodide child process, from spawn to exit: how it is started
 * (the layers), and its JSON-lines protocol read back with a bound on every line.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type BoundFiles,
  type Bubblewrap,
  bubblewrapArgs,
  DEFAULT_RLIMITS,
  INSIDE,
} from "./containment";

/** Where the child script lives; Node runs it directly (type stripping). */
export const CHILD_SCRIPT = fileURLToPath(new URL("./pyodide-child.ts", import.meta.url));
/** The nearest package.json, which tells Node's type stripping that the script is a module. */
const CHILD_PACKAGE_JSON = join(dirname(CHILD_SCRIPT), "../../package.json");

/** The host programs and paths a child needs. */
export interface ChildLaunch {
  /** The Node binary (process.execPath: the same Node 24 as the host). */
  node: string;
  pyodideDir: string;
  /** `prlimit`, for the OS limits; null where it is missing (a warning is logged at start). */
  prlimit: string | null;
  /** The OS boundary: each child in bubblewrap's namespaces (null: on Lambda, or uncontained). */
  bubblewrap: Bubblewrap | null;
  /** `unshare`, when an uncontained child gets a network namespace of its own. */
  unshare: string | null;
  /** Leave Pyodide's bridge to the host realm open: only for tests of the OS layer. */
  openBridge?: boolean;
}

/** A child that runs a program, or the one that makes the memory snapshot into `dir`. */
export type ChildMode =
  | {
      run: {
        snapshot: boolean;
        dataBytes: number;
        /** The address space (RLIMIT_AS); only the data engine's children get one. */
        addressBytes?: number;
        cpuSeconds: number;
        /**
         * Which user of the pool runs it (a root stack): each child gets its own
         * id, so the per-user process limit and anything else the kernel counts
         * per user is the child's alone, not shared with the next tenant's child.
         */
        uidSlot?: number;
      };
    }
  | { snapshotDir: string };

/** How many user ids a root stack runs children as, from `DEFAULT_SANDBOX_UID` up. */
export const UID_POOL = 64;

/** What to spawn: the command line and, when the stack is root, the id to run it as. */
export interface ChildSpawn {
  command: string[];
  uid: number | null;
}

/**
 * Builds the command line of a child: the OS limits, the boundary (bubblewrap,
 * or on Lambda the instance itself), then Node with its permission model reading
 * only what the child needs.
 */
export function childCommand(launch: ChildLaunch, mode: ChildMode): ChildSpawn {
  const contained = launch.bubblewrap !== null;
  const paths = contained
    ? {
        node: INSIDE.node,
        script: INSIDE.script,
        pyodide: INSIDE.pyodide,
        json: INSIDE.packageJson,
      }
    : {
        node: launch.node,
        script: CHILD_SCRIPT,
        pyodide: launch.pyodideDir,
        json: CHILD_PACKAGE_JSON,
      };
  const node = [
    paths.node,
    "--permission",
    ...[paths.pyodide, paths.script, paths.json].map((path) => `--allow-fs-read=${path}`),
    "--disable-warning=ExperimentalWarning",
    "--max-old-space-size=256",
  ];
  const snapshotFile = (dir: string) => join(contained ? INSIDE.out : dir, "python.snapshot");
  const program =
    "snapshotDir" in mode
      ? [
          ...node,
          `--allow-fs-write=${snapshotFile(mode.snapshotDir)}`,
          paths.script,
          "snapshot",
          paths.pyodide,
          snapshotFile(mode.snapshotDir),
        ]
      : [
          ...node,
          paths.script,
          "run",
          paths.pyodide,
          // The snapshot comes as an open descriptor: no path to allow, no file to leave behind.
          ...(mode.run.snapshot ? ["fd:3"] : []),
          ...(launch.openBridge ? ["open-bridge"] : []),
        ];
  const limits = launch.prlimit
    ? [
        launch.prlimit,
        `--nproc=${DEFAULT_RLIMITS.processes}`,
        `--nofile=${DEFAULT_RLIMITS.openFiles}`,
        // The snapshot maker writes the snapshot (about 20 MB) to its folder.
        `--fsize=${"snapshotDir" in mode ? 512 * 1024 * 1024 : DEFAULT_RLIMITS.fileBytes}`,
        // CPU time in case the host cannot kill it; boot takes a few seconds of it.
        ...("run" in mode ? [`--data=${mode.run.dataBytes}`, `--cpu=${mode.run.cpuSeconds}`] : []),
        "--",
      ]
    : [];
  if (launch.bubblewrap) {
    const files = childFiles(launch.node, launch.pyodideDir);
    const extra = "snapshotDir" in mode ? ["--bind", mode.snapshotDir, INSIDE.out] : [];
    return {
      command: [...limits, launch.bubblewrap.bwrap, ...bubblewrapArgs(files, extra), ...program],
      uid:
        launch.bubblewrap.uid === null
          ? null
          : launch.bubblewrap.uid + ("run" in mode ? (mode.run.uidSlot ?? 0) % UID_POOL : 0),
    };
  }
  const network = launch.unshare && "run" in mode ? [launch.unshare, "--net", "--"] : [];
  return { command: [...limits, ...network, ...program], uid: null };
}

/** The host files a child needs, bound read-only into its boundary. */
export function childFiles(node: string, pyodideDir: string): BoundFiles {
  return { node, script: CHILD_SCRIPT, packageJson: CHILD_PACKAGE_JSON, pyodide: pyodideDir };
}

/** The snapshot file that `childCommand` told a snapshot maker to write into `dir`. */
export function snapshotPath(dir: string): string {
  return join(dir, "python.snapshot");
}

/** A message of the child, as parsed; anything else ends the run as `internal`. */
export type ChildMessage =
  | { t: "ready" }
  | { t: "out" | "err"; s: string }
  | { t: "done"; answer?: string; overflow?: boolean };

/** The longest line the child may send: output chunks and the answer are bounded well below. */
const MAX_LINE_CHARS = 16 * 1024 * 1024;

/** A running child: its messages, its end, and a way to kill its whole process group. */
export class PyodideProcess {
  readonly #child: ChildProcess;
  readonly #listeners = new Set<(message: ChildMessage) => void>();
  #buffer = "";
  #stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * The child process itself ended (`exit`), while a process it started may
   * still hold its pipes open (which `exited`, on `close`, waits for). Without a
   * pid namespace, the sweep that kills such a process waits only for this.
   */
  readonly ended: Promise<void>;
  readonly ready: Promise<void>;

  /** `snapshotFd`: an open descriptor of the memory snapshot, handed to the child as its fd 3. */
  constructor(spawnAs: ChildSpawn, snapshotFd?: number) {
    const [file, ...args] = spawnAs.command as [string, ...string[]];
    // An empty environment: on AWS this keeps the role's credentials away from the
    // code; `detached` makes the child a process group leader, killed as a group.
    // Only the protocol pipes (and the snapshot) are passed on.
    this.#child = spawn(file, args, {
      env: {},
      detached: true,
      stdio: ["pipe", "pipe", "pipe", ...(snapshotFd === undefined ? [] : [snapshotFd])],
      ...(spawnAs.uid === null ? {} : { uid: spawnAs.uid, gid: spawnAs.uid }),
    });
    this.exited = new Promise((resolve) => {
      this.#child.once("close", (code, signal) => resolve({ code, signal }));
      this.#child.once("error", () => resolve({ code: null, signal: null }));
    });
    this.ended = new Promise((resolve) => {
      this.#child.once("exit", () => resolve());
      this.#child.once("error", () => resolve());
    });
    this.#child.stdout?.setEncoding("utf8");
    this.#child.stdout?.on("data", (chunk: string) => this.#read(chunk));
    this.#child.stderr?.setEncoding("utf8");
    this.#child.stderr?.on("data", (chunk: string) => {
      // Kept for diagnosis of a crash; bounded.
      this.#stderr = (this.#stderr + chunk).slice(-8192);
    });
    this.#child.stdin?.on("error", () => {});
    this.ready = new Promise((resolve, reject) => {
      const off = this.onMessage((message) => {
        if (message.t === "ready") {
          off();
          resolve();
        }
      });
      this.exited.then(() =>
        reject(new Error(`the Python child ended while starting: ${this.#stderr.slice(-1000)}`)),
      );
    });
    this.ready.catch(() => {});
  }

  /** The last lines the child wrote to stderr (Node's own errors, not the program's). */
  get stderrTail(): string {
    return this.#stderr;
  }

  onMessage(listener: (message: ChildMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  send(line: string): void {
    this.#child.stdin?.end(`${line}\n`);
  }

  /**
   * The data segment the booted child uses now (VmData of its Node process), which
   * the engine measures once to set every later child's OS data limit at spawn:
   * the limit cannot be tightened after boot, because a root stack may not change
   * the limits of a process that runs as another user.
   */
  dataBytes(): Promise<number> {
    return this.#status("VmData");
  }

  /** The whole address space the booted child has mapped (VmSize), for the data engine's RLIMIT_AS. */
  addressBytes(): Promise<number> {
    return this.#status("VmSize");
  }

  async #status(field: "VmData" | "VmSize"): Promise<number> {
    const spawned = this.#child.pid;
    if (spawned === undefined) throw new Error("the Python child has no process id");
    // Inside bubblewrap, the interpreter is a grandchild of the process spawned here.
    const pid = await nodeProcessUnder(spawned);
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const value = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1];
    if (value === undefined) throw new Error("the Python child's memory use cannot be read");
    return Number(value) * 1024;
  }

  /** SIGKILL to the whole process group: nothing the program started survives it. */
  kill(): void {
    const pid = this.#child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }

  #read(chunk: string): void {
    this.#buffer += chunk;
    if (this.#buffer.length > MAX_LINE_CHARS) {
      this.#emit({ t: "done" });
      this.kill();
      return;
    }
    let end = this.#buffer.indexOf("\n");
    while (end >= 0) {
      const line = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 1);
      this.#emit(parseMessage(line));
      end = this.#buffer.indexOf("\n");
    }
  }

  #emit(message: ChildMessage): void {
    for (const listener of [...this.#listeners]) listener(message);
  }
}

/** The interpreters' process names: Node (Pyodide's children), CPython (the data engine's). */
const NODE_NAMES = new Set(["node", "MainThread", "python3"]);

/** The Node process at or below `root` (bubblewrap forks twice before it starts Node). */
async function nodeProcessUnder(root: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const parents = new Map<number, number[]>();
    const names = new Map<number, string>();
    for (const entry of await readdir("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
      const close = stat.lastIndexOf(")");
      if (close < 0) continue;
      const pid = Number(entry);
      names.set(pid, stat.slice(stat.indexOf("(") + 1, close));
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), pid]);
    }
    const queue = [root];
    while (queue.length > 0) {
      const pid = queue.shift() as number;
      // Node 24 names its main thread `MainThread`; before that it is `node`.
      if (NODE_NAMES.has(names.get(pid) ?? "")) return pid;
      queue.push(...(parents.get(pid) ?? []));
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the Python child's Node process cannot be found");
}

function parseMessage(line: string): ChildMessage {
  try {
    const value = JSON.parse(line) as Record<string, unknown>;
    if (value.t === "ready") return { t: "ready" };
    if ((value.t === "out" || value.t === "err") && typeof value.s === "string") {
      return { t: value.t, s: value.s };
    }
    if (value.t === "done") {
      return {
        t: "done",
        ...(typeof value.answer === "string" ? { answer: value.answer } : {}),
        ...(value.overflow === true ? { overflow: true } : {}),
      };
    }
  } catch {
    // Not JSON: treated as the end of a broken run below.
  }
  return { t: "done" };
}

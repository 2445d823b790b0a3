/**
 * One locked-down Pyodide child process, from spawn to exit: how it is started
 * (the layers), and its JSON-lines protocol read back with a bound on every line.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the child script lives; Node runs it directly (type stripping). */
export const CHILD_SCRIPT = fileURLToPath(new URL("./pyodide-child.ts", import.meta.url));

/** The host programs and paths a child needs. */
export interface ChildLaunch {
  /** The Node binary (process.execPath: the same Node 24 as the host). */
  node: string;
  pyodideDir: string;
  /** `prlimit`, for the OS data limit; null where it is missing (a warning is logged at start). */
  prlimit: string | null;
  /** `unshare`, when this engine cuts the network with a namespace per child. */
  unshare: string | null;
}

/** A message of the child, as parsed; anything else ends the run as `internal`. */
export type ChildMessage =
  | { t: "ready" }
  | { t: "out" | "err"; s: string }
  | { t: "done"; answer?: string; overflow?: boolean };

/**
 * Builds the command line of a child: the OS data limit, the network namespace,
 * then Node with its permission model reading only what the child needs.
 */
export function childCommand(
  launch: ChildLaunch,
  mode: { run: { snapshot: boolean; dataBytes: number } } | { snapshot: string },
): string[] {
  const reads = [
    launch.pyodideDir,
    CHILD_SCRIPT,
    join(dirname(CHILD_SCRIPT), "../../package.json"),
  ];
  const node = [
    launch.node,
    "--permission",
    ...reads.map((path) => `--allow-fs-read=${path}`),
    "--disable-warning=ExperimentalWarning",
    "--max-old-space-size=256",
  ];
  if ("snapshot" in mode) {
    return [
      ...node,
      `--allow-fs-write=${mode.snapshot}`,
      CHILD_SCRIPT,
      "snapshot",
      launch.pyodideDir,
      mode.snapshot,
    ];
  }
  const { snapshot, dataBytes } = mode.run;
  return [
    ...(launch.prlimit ? [launch.prlimit, `--data=${dataBytes}`, "--"] : []),
    ...(launch.unshare ? [launch.unshare, "--net", "--"] : []),
    ...node,
    CHILD_SCRIPT,
    "run",
    launch.pyodideDir,
    // The snapshot comes as an open descriptor: no path to allow, no file to leave behind.
    ...(snapshot ? ["fd:3"] : []),
  ];
}

/** The longest line the child may send: output chunks and the answer are bounded well below. */
const MAX_LINE_CHARS = 16 * 1024 * 1024;

/** A running child: its messages, its end, and a way to kill its whole process group. */
export class PyodideProcess {
  readonly #child: ChildProcess;
  readonly #listeners = new Set<(message: ChildMessage) => void>();
  #buffer = "";
  #stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly ready: Promise<void>;

  /** `snapshotFd`: an open descriptor of the memory snapshot, handed to the child as its fd 3. */
  constructor(command: string[], snapshotFd?: number) {
    const [file, ...args] = command as [string, ...string[]];
    // An empty environment: on AWS this keeps the role's credentials away from the
    // code; `detached` makes the child a process group leader, killed as a group.
    this.#child = spawn(file, args, {
      env: {},
      detached: true,
      stdio: ["pipe", "pipe", "pipe", ...(snapshotFd === undefined ? [] : [snapshotFd])],
    });
    this.exited = new Promise((resolve) => {
      this.#child.once("close", (code, signal) => resolve({ code, signal }));
      this.#child.once("error", () => resolve({ code: null, signal: null }));
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
   * Sets the OS limits of the run, measured from what the booted child uses now:
   * data grows by at most `dataBytes` (the limit at spawn had to cover Node's and
   * Pyodide's own start, which varies), and CPU time by at most `cpuSeconds`, so
   * that a child whose parent died cannot spin forever.
   */
  async limit(prlimit: string, dataBytes: number, cpuSeconds: number): Promise<void> {
    const pid = this.#child.pid;
    if (pid === undefined) throw new Error("the Python child has no process id");
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const data = /^VmData:\s+(\d+) kB$/m.exec(status)?.[1];
    // Fields 14 and 15 of /proc/PID/stat: user and system time in clock ticks (100 a second).
    const stat = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]?.split(" ");
    const ticks = Number(stat?.[11]) + Number(stat?.[12]);
    if (data === undefined || !Number.isFinite(ticks)) {
      throw new Error("the Python child's resource use cannot be read");
    }
    const cpu = Math.ceil(ticks / 100) + cpuSeconds;
    const args = [
      "--pid",
      String(pid),
      `--data=${Number(data) * 1024 + dataBytes}`,
      `--cpu=${cpu}`,
    ];
    await new Promise<void>((resolve, reject) =>
      execFile(prlimit, args, (error) => (error ? reject(error) : resolve())),
    );
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

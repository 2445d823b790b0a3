/**
 * Python runs in Pyodide, one child process per run. Pyodide is not a sandbox
 * (its `js` module reaches the host process by design), so the process is the
 * boundary, in layers: an empty environment, Node's permission model (reads of
 * the Pyodide files only; no writes, child processes, workers or addons), an OS
 * data limit, no network (a namespace per child, or the platform's), and a
 * SIGKILL of the process group at the deadline.
 *
 * A process serves exactly one run, so nothing of one run can be seen by the
 * next. To hide the start (about 0.4 s from a memory snapshot, 2 to 4 s without),
 * the next child is started as soon as one is taken: it boots Pyodide and waits
 * for its request. The snapshot is made once per engine by a child that runs no
 * user code; the engine keeps it open and deletes its file at once, so children
 * read it from an inherited descriptor and nothing is left on disk.
 */
import { closeSync, openSync, unlinkSync, writeFileSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  isInputVariable,
  type ParsedSandboxRequest,
  type SandboxLimits,
  sandboxError,
} from "@stackvm/core/sandbox-protocol";
import {
  checkFiles,
  type Engine,
  failedOutcome,
  memoryLimitError,
  OutputCollector,
  outputLimitError,
  type RunOutcome,
  timeoutError,
} from "../outcome";
import type { Bubblewrap } from "./containment";
import { type DataLaunch, dataChildCommand } from "./data-process";
import { PYTHON_DRIVER } from "./driver-py";
import {
  type ChildLaunch,
  type ChildMode,
  childCommand,
  PyodideProcess,
  snapshotPath,
  UID_POOL,
} from "./pyodide-process";
import { seccompProgram } from "./seccomp";

export interface PythonEngineOptions {
  /** `prlimit` and `unshare` as found on this host (null: not used). */
  prlimit: string | null;
  unshare: string | null;
  /** Each child in bubblewrap's namespaces (the local boundary); null on Lambda. */
  bubblewrap: Bubblewrap | null;
  /**
   * After each run, before the next child starts: kill every process of this
   * instance's user but the runner, and empty the writable folders (on Lambda,
   * where a warm instance serves the next tenant and there are no namespaces).
   */
  sweep?: () => Promise<void>;
  /** Leave Pyodide's bridge to the host realm open: only for tests of the OS layer. */
  openBridge?: boolean;
  /**
   * What Node and Pyodide need under the OS data limit before the program's own
   * memory (Node reserves about 560 MiB of address space at start). Default 1024.
   */
  baseDataMib?: number;
  /** Boot children from a memory snapshot (default true); off, each boots cold. */
  snapshot?: boolean;
  /** Where to report that the snapshot could not be made. */
  warn?: (message: string) => void;
  /**
   * Run CPython from the system's packages instead of Pyodide: the data engine
   * (numpy, pandas, matplotlib, openpyxl), always behind bubblewrap. No snapshot;
   * the child imports the libraries while it waits for its request.
   */
  data?: Omit<DataLaunch, "seccomp">;
  /**
   * Serve one run, then start no other child (the data function on Lambda,
   * whose process exits after its answer). The sweep still runs after it.
   */
  oneRun?: boolean;
}

const DEFAULT_BASE_DATA_MIB = 1024;
/** Room above the measured base for what the driver and the boot's variance take. */
const DATA_SLACK_MIB = 48;
/** Room in the data engine's address space for what is mapped but not data: thread stacks (8 MiB each), libraries loaded late. */
const ADDRESS_SLACK_MIB = 256;

/** A booted child's data segment, and (the data engine) its whole address space (VmSize). */
interface Base {
  data: number;
  size: number | null;
}
/** A child's CPU time, as a backstop: the host kills it at the deadline, bwrap when the host dies. */
const CPU_BACKSTOP_SECONDS = 120;
/** A child that cannot boot in this time counts as failed. */
const START_TIMEOUT_MS = 60_000;

interface Warm {
  /** The child, spawned once the snapshot question is settled. */
  process: Promise<PyodideProcess | null>;
  memoryMib: number;
}

export class PythonEngine implements Engine {
  readonly #launch: ChildLaunch;
  readonly #data: DataLaunch | null;
  /** The seccomp program's file, unlinked, kept open: each data child reopens it (its own offset). */
  #seccompFd: number | null = null;
  readonly #baseDataMib: number;
  readonly #warn: (message: string) => void;
  readonly #useSnapshot: boolean;
  /** The snapshot's open descriptor, made on first use so that an engine that never runs Python costs nothing. */
  #snapshotMade: Promise<number | null> | null = null;
  #measured: Promise<Base> | null = null;
  /** Children started so far, which picks each one's user id from the pool. */
  #children = 0;
  #warm: Warm | null = null;
  readonly #running = new Set<PyodideProcess>();
  /** The snapshot maker and the calibration probe while they boot: a close ends them rather than waits for them. */
  readonly #booting = new Set<PyodideProcess>();
  readonly #sweep: (() => Promise<void>) | null;
  readonly #oneRun: boolean;
  /** The one run of a `oneRun` engine was taken. */
  #spent = false;
  /** The sweep after the last run; the next child starts only once it is done. */
  #swept: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: PythonEngineOptions) {
    // The data engine never starts Pyodide, and the data function's image has none.
    const pyodideDir = options.data
      ? ""
      : dirname(createRequire(import.meta.url).resolve("pyodide/pyodide.mjs"));
    this.#launch = {
      node: process.execPath,
      pyodideDir,
      prlimit: options.prlimit,
      unshare: options.unshare,
      bubblewrap: options.bubblewrap,
      openBridge: options.openBridge === true,
    };
    this.#sweep = options.sweep ?? null;
    this.#oneRun = options.oneRun === true;
    this.#baseDataMib = options.baseDataMib ?? DEFAULT_BASE_DATA_MIB;
    this.#warn = options.warn ?? (() => {});
    this.#data = options.data
      ? { ...options.data, seccomp: this.#openSeccomp(options.data.inetSockets) }
      : null;
    this.#useSnapshot = options.snapshot !== false && this.#data === null;
  }

  /** Writes the data children's seccomp program to a file that only descriptors keep. */
  #openSeccomp(inetSockets: boolean | undefined): boolean {
    const program = seccompProgram(process.arch, { inetSockets: inetSockets !== false });
    if (!program) {
      this.#warn(
        `the data engine runs without its seccomp filter: it is built for x86_64, and this machine is ${process.arch}`,
      );
      return false;
    }
    const file = join(tmpdir(), `stackvm-seccomp-${process.pid}-${Date.now()}.bpf`);
    writeFileSync(file, program, { mode: 0o600 });
    this.#seccompFd = openSync(file, "r");
    unlinkSync(file);
    return true;
  }

  /** A child for a run (or the calibration probe) of this engine's interpreter. */
  #child(
    run: Extract<ChildMode, { run: unknown }>["run"],
    snapshotFd: number | null,
  ): PyodideProcess {
    if (!this.#data)
      return new PyodideProcess(childCommand(this.#launch, { run }), snapshotFd ?? undefined);
    if (this.#seccompFd === null) return new PyodideProcess(dataChildCommand(this.#data, run));
    // A fresh open of the same file: bwrap reads the program from offset 0 and closes it.
    const fd = openSync(`/proc/self/fd/${this.#seccompFd}`, "r");
    try {
      return new PyodideProcess(dataChildCommand(this.#data, run), fd);
    } finally {
      closeSync(fd);
    }
  }

  get #snapshot(): Promise<number | null> {
    if (!this.#snapshotMade) {
      this.#snapshotMade = this.#useSnapshot ? this.#makeSnapshot() : Promise.resolve(null);
    }
    return this.#snapshotMade;
  }

  /** Starts a child for the given memory limit ahead of the first run. */
  async warm(memoryMib: number): Promise<void> {
    if (this.#closed) return;
    if (this.#warm?.memoryMib !== memoryMib) this.#prestart(memoryMib);
    const child = await this.#warm?.process;
    await child?.ready.catch(() => {});
  }

  async run(request: ParsedSandboxRequest, limits: SandboxLimits): Promise<RunOutcome> {
    if (this.#closed) throw new Error("the Python engine is closed");
    if (this.#spent) throw new Error("the Python engine served its one run");
    if (this.#warm?.memoryMib !== limits.memory_mib) this.#prestart(limits.memory_mib);
    const taken = this.#warm as Warm;
    // The next run gets a fresh child; this one serves exactly one run. Where a
    // sweep follows each run, the next child starts after it, so that nothing a
    // run left behind can reach the child that serves the next one.
    this.#warm = null;
    if (this.#oneRun) this.#spent = true;
    else if (!this.#sweep) this.#prestart(limits.memory_mib);
    const child = await taken.process;
    if (!child) throw new Error("the Python engine is closed");
    this.#running.add(child);
    try {
      await withTimeout(child.ready, START_TIMEOUT_MS);
      return await exchange(child, request, limits, this.#data ? "" : PYTHON_DRIVER);
    } catch (error) {
      return failedOutcome(
        sandboxError(
          "unavailable",
          `the Python sandbox could not start: ${(error as Error).message}`,
        ),
      );
    } finally {
      child.kill();
      this.#running.delete(child);
      if (this.#sweep) await this.#afterRun(child, limits.memory_mib);
    }
  }

  /** Waits for the child's end, sweeps the instance, then starts the next child. */
  async #afterRun(child: PyodideProcess, memoryMib: number): Promise<void> {
    // Its own end, not its pipes': a stray it started may hold those until the sweep.
    await child.ended;
    this.#swept = (this.#sweep as () => Promise<void>)();
    await this.#swept;
    if (!this.#warm) this.#prestart(memoryMib);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const warm = this.#warm;
    this.#warm = null;
    // A close right after start (a stack stopped at once) would otherwise wait for
    // the whole boot chain, snapshot then calibration then child: seconds of CPU.
    for (const child of this.#booting) child.kill();
    (await warm?.process)?.kill();
    for (const child of this.#running) child.kill();
    const fd = await this.#snapshotMade;
    if (typeof fd === "number") closeSync(fd);
    if (this.#seccompFd !== null) closeSync(this.#seccompFd);
    this.#seccompFd = null;
  }

  #prestart(memoryMib: number): void {
    const previous = this.#warm;
    if (previous) void previous.process.then((child) => child?.kill());
    if (this.#closed || this.#spent) {
      this.#warm = null;
      return;
    }
    // The calibration child is slot 0; run children take the others in turn.
    const uidSlot = 1 + (this.#children++ % (UID_POOL - 1));
    const ready = Promise.all([this.#snapshot, this.#base, this.#swept]);
    const process = ready.then(([fd, base]) =>
      this.#closed
        ? null
        : this.#child(
            {
              snapshot: fd !== null,
              dataBytes: base.data + (DATA_SLACK_MIB + memoryMib) * 1024 * 1024,
              // The data engine's CPython can map shared memory (mmap, memfd, SysV
              // shm), which the data limit does not count: its address space is capped too.
              ...(base.size === null
                ? {}
                : { addressBytes: base.size + (ADDRESS_SLACK_MIB + memoryMib) * 1024 * 1024 }),
              cpuSeconds: CPU_BACKSTOP_SECONDS,
              uidSlot,
            },
            fd,
          ),
    );
    this.#warm = { process, memoryMib };
  }

  /**
   * What a booted child uses before the program's own memory, measured once on a
   * child that runs no code (Node reserves about 560 MiB of address space at
   * start, and Pyodide's boot varies with the machine). Every child's data limit
   * is this plus the run's memory limit, set at spawn.
   */
  get #base(): Promise<Base> {
    if (!this.#measured) this.#measured = this.#measureBase();
    return this.#measured;
  }

  async #measureBase(): Promise<Base> {
    const generousBytes = (this.#baseDataMib + 256) * 1024 * 1024;
    const generous = { data: generousBytes, size: this.#data ? 4 * generousBytes : null };
    if (!this.#launch.prlimit) return generous;
    const fd = await this.#snapshot;
    if (this.#closed) return generous;
    const probe = this.#child(
      { snapshot: fd !== null, dataBytes: generousBytes, cpuSeconds: CPU_BACKSTOP_SECONDS },
      fd,
    );
    this.#booting.add(probe);
    try {
      await withTimeout(probe.ready, START_TIMEOUT_MS);
      const data = await probe.dataBytes();
      return { data, size: this.#data ? await probe.addressBytes() : null };
    } catch (error) {
      if (this.#closed) return generous;
      this.#warn(
        `the Python children's memory use could not be measured, so their data limit is ${this.#baseDataMib} MiB above the run's: ${(error as Error).message}`,
      );
      const fallback = this.#baseDataMib * 1024 * 1024;
      return { data: fallback, size: this.#data ? 4 * fallback : null };
    } finally {
      this.#booting.delete(probe);
      probe.kill();
    }
  }

  async #makeSnapshot(): Promise<number | null> {
    let dir: string | null = null;
    try {
      dir = await mkdtemp(join(tmpdir(), "stackvm-pyodide-"));
      // The maker runs as the children's user, inside the same boundary, so the
      // snapshot holds the same paths the children see.
      const uid = this.#launch.bubblewrap?.uid ?? null;
      if (uid !== null) await chown(dir, uid, uid);
      if (this.#closed) return null;
      const maker = new PyodideProcess(childCommand(this.#launch, { snapshotDir: dir }));
      this.#booting.add(maker);
      const { code, signal } = await maker.exited.finally(() => this.#booting.delete(maker));
      if (this.#closed) return null;
      if (code !== 0) throw new Error(`exit ${code ?? signal}: ${maker.stderrTail.slice(-500)}`);
      return openSync(snapshotPath(dir), "r");
    } catch (error) {
      this.#warn(
        `the Pyodide memory snapshot could not be made, so every Python run boots cold (2 to 4 s): ${(error as Error).message}`,
      );
      return null;
    } finally {
      // The open descriptor keeps the bytes; the file and its folder go now.
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  }
}

type Ending = { how: "done"; answer: string } | { how: "timeout" | "output_limit" | "exited" };

/** Runs one request in a ready child and turns what happens into an outcome. */
async function exchange(
  child: PyodideProcess,
  request: ParsedSandboxRequest,
  limits: SandboxLimits,
  driver: string,
): Promise<RunOutcome> {
  const output = new OutputCollector(limits.output_bytes);
  const ended = new Promise<Ending>((resolve) => {
    const timer = setTimeout(() => resolve({ how: "timeout" }), limits.time_ms);
    const end = (ending: Ending) => {
      clearTimeout(timer);
      resolve(ending);
    };
    child.onMessage((message) => {
      if (message.t === "out" || message.t === "err") {
        if (!output.add(message.t === "out" ? "stdout" : "stderr", message.s)) {
          end({ how: "output_limit" });
        }
      } else if (message.t === "done") {
        if (message.overflow) {
          output.truncated = true;
          end({ how: "output_limit" });
        } else if (message.answer !== undefined) end({ how: "done", answer: message.answer });
        else end({ how: "exited" });
      }
    });
    void child.exited.then(() => end({ how: "exited" }));
  });
  child.send(
    JSON.stringify({
      driver,
      outputBytes: limits.output_bytes,
      request: JSON.stringify({
        code: request.code,
        inputs: request.inputs,
        variables: Object.keys(request.inputs).filter(isInputVariable),
        files: request.files,
        limits: { max_files: limits.max_files, files_bytes: limits.files_bytes },
      }),
    }),
  );
  const ending = await ended;
  // Whatever happened, the child's process group ends now.
  child.kill();
  if (ending.how === "timeout") return failedOutcome(timeoutError(limits), output);
  if (ending.how === "output_limit") return failedOutcome(outputLimitError(limits), output);
  if (ending.how === "done") return fromAnswer(ending.answer, output, limits);
  const { signal, code } = await child.exited;
  const tail = child.stderrTail;
  if (
    /out of memory|allocation failed|OOM|Aborted/i.test(tail) ||
    signal === "SIGABRT" ||
    signal === "SIGTRAP" ||
    signal === "SIGSEGV"
  ) {
    return failedOutcome(memoryLimitError(limits), output);
  }
  const denied = /code: 'ERR_ACCESS_DENIED',\s+permission: '(\w*)',\s+resource: '([^']*)'/.exec(
    tail,
  );
  if (denied) {
    return failedOutcome(
      sandboxError(
        "runtime_error",
        `the program was stopped: it tried to use ${denied[1] || "an API"}${denied[2] ? ` (${denied[2]})` : ""}, which the sandbox forbids`,
      ),
      output,
    );
  }
  // The program brought the interpreter down (a fatal error inside Pyodide): its
  // doing, so not retryable.
  return failedOutcome(
    sandboxError(
      "runtime_error",
      `the Python interpreter crashed while running the program (${signal ?? `exit ${code}`}): ${tail.trim().split("\n").slice(-3).join(" ").slice(0, 500)}`,
    ),
    output,
  );
}

interface DriverAnswer {
  result: string | null;
  error: { code: string; message: string; traceback?: string } | null;
  files: unknown;
}

const DRIVER_CODES = new Set([
  "syntax_error",
  "runtime_error",
  "memory_limit",
  "file_limit",
  "result_not_json",
]);

function fromAnswer(text: string, output: OutputCollector, limits: SandboxLimits): RunOutcome {
  let answer: DriverAnswer;
  try {
    answer = JSON.parse(text) as DriverAnswer;
  } catch {
    return failedOutcome(
      sandboxError("internal", "the Python sandbox answered something that is not JSON"),
      output,
    );
  }
  const files = checkFiles(answer.files, limits);
  const error = answer.error;
  if (error) {
    if (error.code === "memory_limit") {
      return failedOutcome(memoryLimitError(limits), output, files.files);
    }
    const code = DRIVER_CODES.has(error.code) ? (error.code as "runtime_error") : "runtime_error";
    const message =
      typeof error.message === "string" ? error.message.slice(0, 4000) : "the code failed";
    const traceback =
      typeof error.traceback === "string" ? error.traceback.slice(-8000) : undefined;
    return failedOutcome(sandboxError(code, message, traceback), output, files.files);
  }
  if (typeof answer.result !== "string" || Buffer.byteLength(answer.result) > limits.output_bytes) {
    return failedOutcome(
      sandboxError(
        "output_limit",
        `the result's JSON takes more than ${limits.output_bytes} bytes; return less, or write it to a file`,
      ),
      output,
      files.files,
    );
  }
  let result: unknown;
  try {
    result = JSON.parse(answer.result);
  } catch {
    return failedOutcome(
      sandboxError("result_not_json", "the result is not valid JSON"),
      output,
      files.files,
    );
  }
  return {
    result,
    stdout: output.stdout,
    stderr: output.stderr,
    truncated: output.truncated,
    files: files.files,
    error: files.error,
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

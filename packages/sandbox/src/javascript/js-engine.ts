/**
 * JavaScript runs in QuickJS (WebAssembly) inside a worker thread. QuickJS has no
 * network, file or process API at all, so it needs no child process of its own;
 * the layers are QuickJS's limits, a capped `WebAssembly.Memory` per run, and
 * `worker.terminate()` at the hard deadline (a fresh worker after). Workers are
 * reused between runs because each run gets a fresh wasm instance (see
 * `quickjs-worker.ts`); a worker that timed out or failed on the host side is
 * never reused.
 */
import { Worker } from "node:worker_threads";
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
import { GUEST_PRELUDE } from "./guest-prelude";
import type { WorkerDone, WorkerRun, WorkerToEngine } from "./worker-messages";

/** Time the soft interrupt gets to answer cleanly before the worker is terminated. */
const HARD_DEADLINE_GRACE_MS = 250;
/** How long a new worker may take to compile QuickJS before the run counts as failed. */
const WORKER_START_MS = 20_000;

export interface JavaScriptEngineOptions {
  /** Idle workers kept warm (default 1). */
  idleWorkers?: number;
}

/** The JavaScript engine: one QuickJS worker per concurrent run, reused when clean. */
export class JavaScriptEngine implements Engine {
  readonly #idle: Worker[] = [];
  readonly #busy = new Set<Worker>();
  readonly #maxIdle: number;
  #closed = false;

  constructor(options: JavaScriptEngineOptions = {}) {
    this.#maxIdle = options.idleWorkers ?? 1;
  }

  /** Starts a worker ahead of the first run, so that its compile time is not on the first request. */
  async warm(): Promise<void> {
    if (this.#idle.length > 0 || this.#closed) return;
    const worker = await startWorker();
    if (this.#closed) await worker.terminate();
    else this.#idle.push(worker);
  }

  async run(request: ParsedSandboxRequest, limits: SandboxLimits): Promise<RunOutcome> {
    if (this.#closed) throw new Error("the JavaScript engine is closed");
    const worker = this.#idle.pop() ?? (await startWorker());
    this.#busy.add(worker);
    const output = new OutputCollector(limits.output_bytes);
    const message: WorkerRun = {
      type: "run",
      code: request.code,
      inputsJson: JSON.stringify(request.inputs),
      filesJson: JSON.stringify(request.files),
      variables: Object.keys(request.inputs).filter(isInputVariable),
      deadline: Date.now() + limits.time_ms,
      timeMs: limits.time_ms,
      memoryMib: limits.memory_mib,
      outputBytes: limits.output_bytes,
      filesBytes: limits.files_bytes,
    };
    const done = await exchange(worker, message, output, limits.time_ms + HARD_DEADLINE_GRACE_MS);
    this.#busy.delete(worker);
    if (done.reuse && !this.#closed && this.#idle.length < this.#maxIdle) this.#idle.push(worker);
    else void worker.terminate();
    return toOutcome(done.message, output, limits);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#idle, ...this.#busy];
    this.#idle.length = 0;
    this.#busy.clear();
    await Promise.all(all.map((worker) => worker.terminate()));
  }
}

function startWorker(): Promise<Worker> {
  const worker = new Worker(new URL("./quickjs-worker.ts", import.meta.url), {
    workerData: { prelude: GUEST_PRELUDE },
    // The worker's process.env is its own empty copy: nothing of the host's.
    env: {},
    // A large native stack for deep recursion inside the wasm; a small JS heap,
    // since the guest's memory is the wasm memory, not V8's heap.
    resourceLimits: { stackSizeMb: 32, maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32 },
    stdout: true,
    stderr: true,
  });
  // Whatever the wasm glue prints is dropped, never mixed into the host's logs.
  worker.stdout.resume();
  worker.stderr.resume();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error("the QuickJS worker did not start in time"));
    }, WORKER_START_MS);
    worker.once("message", () => {
      clearTimeout(timer);
      resolve(worker);
    });
    worker.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

type Exchange = { message: WorkerDone | "timeout" | "output_limit" | "crashed"; reuse: boolean };

/** Sends one run and waits for its end: a `done`, the hard deadline, an output flood or a crash. */
function exchange(
  worker: Worker,
  message: WorkerRun,
  output: OutputCollector,
  hardMs: number,
): Promise<Exchange> {
  return new Promise((resolve) => {
    const finish = (result: Exchange) => {
      clearTimeout(timer);
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
      resolve(result);
    };
    const onMessage = (event: WorkerToEngine) => {
      if (event.type === "output") {
        // The worker stops its guest at the limit; this is the host's own count.
        for (const chunk of event.chunks) {
          if (!output.add(chunk.stream, chunk.text)) {
            finish({ message: "output_limit", reuse: false });
            return;
          }
        }
      } else if (event.type === "done") {
        finish({ message: event, reuse: !event.poisoned });
      }
    };
    const onError = () => finish({ message: "crashed", reuse: false });
    const onExit = () => finish({ message: "crashed", reuse: false });
    const timer = setTimeout(() => finish({ message: "timeout", reuse: false }), hardMs);
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
    worker.postMessage(message);
  });
}

function toOutcome(
  message: Exchange["message"],
  output: OutputCollector,
  limits: SandboxLimits,
): RunOutcome {
  if (message === "timeout") return failedOutcome(timeoutError(limits), output);
  if (message === "output_limit") return failedOutcome(outputLimitError(limits), output);
  if (message === "crashed") {
    return failedOutcome(
      sandboxError("internal", "the JavaScript sandbox's worker ended unexpectedly"),
      output,
    );
  }
  if (message.error) {
    const { code, message: text, traceback } = message.error;
    if (code === "timeout") return failedOutcome(timeoutError(limits), output);
    if (code === "output_limit" && message.truncated) {
      // The guest stopped itself at the limit; the host's own count may not have reached it.
      output.truncated = true;
      return failedOutcome(outputLimitError(limits), output);
    }
    if (code === "memory_limit") return failedOutcome(memoryLimitError(limits), output);
    return failedOutcome(sandboxError(code, text, traceback), output);
  }
  const files = checkFiles(JSON.parse(message.filesJson ?? "[]"), limits);
  return {
    result: JSON.parse(message.resultJson ?? "null"),
    stdout: output.stdout,
    stderr: output.stderr,
    truncated: output.truncated,
    files: files.files,
    error: files.error,
  };
}

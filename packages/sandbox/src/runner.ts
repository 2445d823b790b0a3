/**
 * The sandbox function's core: takes any event, answers a protocol response.
 * It checks the request, caps its limits at the configured ceiling (and at the
 * time the invocation has left), hands it to the engine of its language, and
 * makes sure the answer fits the transport. It never throws for a bad request or
 * a failing program: those are answers.
 */

import { existsSync } from "node:fs";
import {
  type ParsedSandboxRequest,
  resolveSandboxLimits,
  SANDBOX_PROTOCOL_VERSION,
  type SandboxLimits,
  SandboxRequest,
  type SandboxResponse,
  sandboxError,
} from "@stackvm/core/sandbox-protocol";
import type { SandboxConfig } from "./config";
import { findExecutable } from "./host-tools";
import { JavaScriptEngine } from "./javascript/js-engine";
import { failedOutcome, type RunOutcome } from "./outcome";
import { pythonBoundary } from "./python/boundary";
import type { Bubblewrap } from "./python/containment";
import { DATA_LIBRARIES, importsDataLibraries } from "./python/data-libraries";
import { type DataLaunch, dataBinds, SYSTEM_PYTHON } from "./python/data-process";
import { PythonEngine } from "./python/python-engine";

/** A structured log line; the entry file passes its logger. */
export type SandboxLog = (
  level: "info" | "warn" | "error",
  message: string,
  fields?: Record<string, unknown>,
) => void;

const defaultLog: SandboxLog = (level, message, fields) =>
  console.error(JSON.stringify({ level, message, ...fields }));

/** Lambda answers at most 6 MB; stay clear of it. */
const MAX_RESPONSE_BYTES = 5_500_000;
/** Time kept back from the invocation's remaining time for answering. */
const ANSWER_MARGIN_MS = 1_500;

export interface SandboxRunnerOptions {
  log?: SandboxLog;
  /** Boot Python from a memory snapshot (default true). */
  pythonSnapshot?: boolean;
}

/**
 * Runs sandbox requests. One per process; `close()` ends its workers and children.
 *
 * @example
 * const runner = new SandboxRunner(sandboxConfigFromEnv(process.env));
 * const answer = await runner.handle({ v: 1, language: "python", code: "1 + 1" });
 * answer.result // 2
 */
export class SandboxRunner {
  readonly #config: SandboxConfig;
  readonly #log: SandboxLog;
  readonly #javascript = new JavaScriptEngine();
  /** Pyodide; null on the data function (`single-run`), which runs only the data engine. */
  readonly #python: PythonEngine | null;
  /** Why Python is refused, or null when it may run. */
  readonly #pythonRefusal: string | null;
  /** CPython with the data libraries, for Python that imports them; null where it cannot be contained. */
  readonly #data: PythonEngine | null;
  /** Why Python that imports the data libraries is refused, or null. */
  readonly #dataRefusal: string | null;

  constructor(config: SandboxConfig, options: SandboxRunnerOptions = {}) {
    this.#config = config;
    this.#log = options.log ?? defaultLog;
    const prlimit = findExecutable("prlimit");
    if (!prlimit) {
      this.#log("warn", "sandbox: prlimit is missing, so Python runs without an OS memory limit", {
        layer: "memory",
      });
    }
    const python = pythonBoundary(config, this.#log);
    const singleRun = config.containment === "single-run";
    this.#pythonRefusal = python.refusal;
    this.#python = singleRun
      ? null
      : new PythonEngine({
          prlimit,
          unshare: python.unshare,
          bubblewrap: python.bubblewrap,
          ...(python.sweep ? { sweep: python.sweep } : {}),
          ...(config.openBridge ? { openBridge: true } : {}),
          snapshot: options.pythonSnapshot,
          warn: (message) => this.#log("warn", `sandbox: ${message}`),
        });
    const data = singleRun
      ? singleRunDataEngine(prlimit)
      : dataEngine(python.bubblewrap, python.refusal, prlimit);
    this.#dataRefusal = data.refusal;
    this.#data = data.launch
      ? new PythonEngine({
          prlimit,
          unshare: null,
          bubblewrap: data.launch.bubblewrap,
          data: data.launch,
          // Without bwrap's pid namespace, the sweep is what ends a run's strays;
          // on the data function it runs before the answer goes out.
          ...(singleRun && python.sweep ? { sweep: python.sweep, oneRun: true } : {}),
          warn: (message) => this.#log("warn", `sandbox: ${message}`),
        })
      : null;
  }

  /**
   * Starts a JavaScript worker and a Python child now (the child unless the
   * configuration's `warmPython` is false), so that the first runs do not wait.
   */
  async warm(): Promise<void> {
    const skipPython = this.#pythonRefusal !== null || this.#config.warmPython === false;
    const memory = resolveSandboxLimits({}, this.#config.ceiling).memory_mib;
    await Promise.all([
      this.#python ? this.#javascript.warm() : Promise.resolve(),
      skipPython || !this.#python ? Promise.resolve() : this.#python.warm(memory),
      skipPython || !this.#data ? Promise.resolve() : this.#data.warm(memory),
    ]);
  }

  /**
   * Answers one event. `remainingMs` is the time the invocation has left (Lambda's
   * `context.getRemainingTimeInMillis()`); the run's time limit stays below it.
   */
  async handle(event: unknown, remainingMs?: number): Promise<SandboxResponse> {
    const started = Date.now();
    const parsed = SandboxRequest.safeParse(event);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .slice(0, 5)
        .map((issue) => `${issue.path.join(".") || "request"}: ${issue.message}`);
      return answer(
        failedOutcome(
          sandboxError(
            "invalid_request",
            `the sandbox request is invalid (${problems.join("; ")}); it must be {v: 1, language: "javascript"|"python", code, inputs?, files?, limits?}`,
          ),
        ),
        this.#config.ceiling,
        started,
      );
    }
    const request = parsed.data;
    const limits = this.#limits(request, remainingMs);
    let outcome: RunOutcome;
    try {
      outcome = await this.#run(request, limits);
    } catch (error) {
      this.#log("error", "sandbox: a run failed on the host side", {
        error: error instanceof Error ? error.message : String(error),
      });
      outcome = failedOutcome(
        sandboxError("internal", "the sandbox failed on its side; try again"),
      );
    }
    return answer(outcome, limits, started);
  }

  /** Ends every worker and child process. */
  async close(): Promise<void> {
    await Promise.all([this.#javascript.close(), this.#python?.close(), this.#data?.close()]);
  }

  #limits(request: ParsedSandboxRequest, remainingMs: number | undefined): SandboxLimits {
    const limits = resolveSandboxLimits(request.limits, this.#config.ceiling);
    if (remainingMs === undefined) return limits;
    return {
      ...limits,
      time_ms: Math.max(100, Math.min(limits.time_ms, remainingMs - ANSWER_MARGIN_MS)),
    };
  }

  #run(request: ParsedSandboxRequest, limits: SandboxLimits): Promise<RunOutcome> {
    if (!this.#python && !(request.language === "python" && importsDataLibraries(request.code))) {
      return Promise.resolve(failedOutcome(sandboxError("refused", DATA_FUNCTION_ONLY)));
    }
    if (request.language === "javascript") return this.#javascript.run(request, limits);
    if (this.#pythonRefusal) {
      return Promise.resolve(failedOutcome(sandboxError("refused", this.#pythonRefusal)));
    }
    if (this.#python && !importsDataLibraries(request.code)) {
      return this.#python.run(request, limits);
    }
    if (!this.#data) {
      return Promise.resolve(
        failedOutcome(sandboxError("refused", this.#dataRefusal ?? "the data engine is off")),
      );
    }
    return this.#data.run(request, limits);
  }
}

const LIBRARY_NAMES = Object.keys(DATA_LIBRARIES)
  .filter((name) => name !== "python")
  .join(", ");

const DATA_FUNCTION_ONLY = `this is the data sandbox function: it runs only Python that imports ${LIBRARY_NAMES}; the worker sends JavaScript and other Python to the sandbox function`;

/**
 * The data function on Lambda (`single-run`): no bubblewrap (a Lambda instance
 * has no user namespaces), so the instance is the boundary and serves one run;
 * the child installs the seccomp filter itself, with internet sockets refused
 * (the Runtime API listens on the instance's loopback). Only on x86_64, the
 * filter's architecture: elsewhere the engine is refused rather than run bare.
 */
function singleRunDataEngine(prlimit: string | null): {
  launch: Omit<DataLaunch, "seccomp"> | null;
  refusal: string | null;
} {
  if (process.arch !== "x64") {
    return {
      launch: null,
      refusal: `Python that imports ${LIBRARY_NAMES} is refused: the data function's seccomp filter is built for x86_64, and this function is ${process.arch}; deploy it as x86_64 (infra/sandbox-data.ts)`,
    };
  }
  if (!existsSync(SYSTEM_PYTHON)) {
    return {
      launch: null,
      refusal: `Python that imports ${LIBRARY_NAMES} is refused: ${SYSTEM_PYTHON} is not in the data function's image; rebuild it from infra/sandbox-data/Dockerfile`,
    };
  }
  return {
    launch: { python: SYSTEM_PYTHON, prlimit, bubblewrap: null, binds: [], inetSockets: false },
    refusal: null,
  };
}

/**
 * Whether Python that imports the data libraries can run here, and how: CPython
 * from the system's packages, only behind bubblewrap (it runs native code, so
 * the OS boundary is all there is between it and the kernel; see ARCHITECTURE.md).
 */
function dataEngine(
  bubblewrap: Bubblewrap | null,
  pythonRefusal: string | null,
  prlimit: string | null,
): { launch: Omit<DataLaunch, "seccomp"> | null; refusal: string | null } {
  if (pythonRefusal) return { launch: null, refusal: pythonRefusal };
  if (!bubblewrap) {
    return {
      launch: null,
      refusal: `Python that imports ${LIBRARY_NAMES} is refused here: the data engine runs native code, so it runs only behind the bubblewrap boundary, which this sandbox does not have (on AWS such code runs in the data sandbox function, SandboxData, which the worker uses when STACKVM_SANDBOX_DATA_FUNCTION is set: deploy it with infra/sandbox-data.ts); use the standard library, or run the stack where bubblewrap works`,
    };
  }
  if (!existsSync(SYSTEM_PYTHON)) {
    return {
      launch: null,
      refusal: `Python that imports ${LIBRARY_NAMES} is refused: ${SYSTEM_PYTHON} is not installed; the operator installs it and the libraries with scripts/setup-system.sh (Debian: apt-get install python3-numpy python3-pandas python3-matplotlib python3-openpyxl)`,
    };
  }
  return {
    launch: { python: SYSTEM_PYTHON, prlimit, bubblewrap, binds: dataBinds() },
    refusal: null,
  };
}

function answer(outcome: RunOutcome, limits: SandboxLimits, started: number): SandboxResponse {
  const response: SandboxResponse = {
    v: SANDBOX_PROTOCOL_VERSION,
    result: outcome.error ? null : outcome.result,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    truncated: outcome.truncated,
    files: outcome.files,
    error: outcome.error,
    duration_ms: Date.now() - started,
    limits,
  };
  // Escaping can make JSON up to six times its text: check the real size.
  if (Buffer.byteLength(JSON.stringify(response)) <= MAX_RESPONSE_BYTES) return response;
  return {
    ...response,
    result: null,
    stdout: outcome.stdout.slice(0, 64 * 1024),
    stderr: outcome.stderr.slice(0, 64 * 1024),
    truncated: true,
    files: [],
    error: sandboxError(
      "output_limit",
      "the answer (result, output and files together) is too large to send back; return and print less, or write fewer files",
    ),
  };
}

/**
 * The local stand-in for the Lambda `Invoke` of the sandbox function. It runs the
 * same handler in a process of its own (`sandbox-host.ts`), as Lambda runs it in
 * a separate sandbox: an environment with only the sandbox's settings, an empty
 * network namespace (`unshare --net`) where one can be made, the same limits, and
 * the function's timeout. Where no namespace can be made it says so loudly, and
 * the handler refuses Python unless the operator opted in.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { SandboxPort } from "@stackvm/core";
import {
  DEFAULT_SANDBOX_LIMITS,
  requestedSandboxLimits,
  type SandboxLimits,
  type SandboxRequest,
  SandboxResponse,
  sandboxError,
  sandboxFailure,
} from "@stackvm/core/sandbox-protocol";

export interface LocalSandboxOptions {
  /** The function's ceiling of every limit (default: the protocol's defaults). */
  ceiling?: Partial<SandboxLimits>;
  /**
   * Run Python even where no network namespace can be made: the operator's
   * `STACKVM_SANDBOX_ALLOW_NETWORK=1`, read by the entry file.
   */
  allowNetwork?: boolean;
  /** The sandbox function's timeout, as on Lambda (default 60 s). */
  timeoutMs?: number;
  /** Leave Pyodide's bridge to the host open: only for tests that prove the OS layer alone. */
  openBridge?: boolean;
  /** Where the loud line about the network goes (default: stderr). */
  log?: (level: "info" | "warn" | "error", message: string) => void;
  /**
   * Boot a Python child as the process starts (default true), as the Lambda
   * does at init; false leaves it to the first Python run.
   */
  warmPython?: boolean;
}

interface Pending {
  resolve: (response: SandboxResponse) => void;
  limits: SandboxLimits;
  timer: NodeJS.Timeout;
}

interface Host {
  child: ChildProcess;
  ready: Promise<void>;
  pending: Map<number, Pending>;
}

const HOST_SCRIPT = fileURLToPath(new URL("./sandbox-host.ts", import.meta.url));
const UNSHARE = "/usr/bin/unshare";

/**
 * A `SandboxPort` that runs requests in a local sandbox process, started on the
 * first request and again after a crash.
 *
 * @example
 * const sandbox = new LocalSandbox({ allowNetwork: false });
 * const answer = await sandbox.run({ v: 1, language: "javascript", code: "1 + 1" });
 * await sandbox.close();
 */
export class LocalSandbox implements SandboxPort {
  readonly #ceiling: SandboxLimits;
  readonly #allowNetwork: boolean;
  readonly #timeoutMs: number;
  readonly #log: NonNullable<LocalSandboxOptions["log"]>;
  readonly #openBridge: boolean;
  readonly #warmPython: boolean;
  #host: Host | null = null;
  #namespace: boolean | null = null;
  #nextId = 1;
  #closed = false;

  constructor(options: LocalSandboxOptions = {}) {
    this.#ceiling = { ...DEFAULT_SANDBOX_LIMITS, ...options.ceiling };
    this.#allowNetwork = options.allowNetwork ?? false;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#log = options.log ?? ((level, message) => console.error(`[sandbox ${level}] ${message}`));
    this.#openBridge = options.openBridge === true;
    this.#warmPython = options.warmPython !== false;
  }

  /**
   * Starts the sandbox process now. The stack calls it before it opens any store,
   * so that the process holds none of the stack's descriptors.
   */
  start(): void {
    if (!this.#closed && !this.#host) this.#start();
  }

  async run(request: SandboxRequest): Promise<SandboxResponse> {
    if (this.#closed) throw new Error("the local sandbox is closed");
    const limits = requestedSandboxLimits(request, this.#ceiling);
    const host = this.#host ?? this.#start();
    try {
      await host.ready;
    } catch (error) {
      return sandboxFailure(
        sandboxError(
          "unavailable",
          `the local sandbox could not start: ${(error as Error).message}`,
        ),
        limits,
      );
    }
    const id = this.#nextId++;
    return new Promise((resolve) => {
      // As Lambda does at the function's timeout: the instance is ended, the call fails.
      const timer = setTimeout(() => {
        host.pending.delete(id);
        this.#stop(host);
        resolve(sandboxFailure(sandboxError("timeout", "the sandbox function timed out"), limits));
      }, this.#timeoutMs + 5_000);
      host.pending.set(id, { resolve, limits, timer });
      host.child.send({ id, request, remainingMs: this.#timeoutMs });
    });
  }

  /** Ends the sandbox process and everything it started. */
  async close(): Promise<void> {
    this.#closed = true;
    const host = this.#host;
    if (!host) return;
    const exited = new Promise((resolve) => host.child.once("exit", resolve));
    // Disconnecting lets the host close its runner; a kill follows if it lingers.
    if (host.child.connected) host.child.disconnect();
    const timer = setTimeout(() => host.child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }

  #start(): Host {
    if (this.#namespace === null) {
      this.#namespace =
        spawnSync(UNSHARE, ["--net", "--", process.execPath, "-e", "0"], { stdio: "ignore" })
          .status === 0;
      if (!this.#namespace) {
        this.#log(
          "error",
          this.#allowNetwork
            ? "THE LOCAL SANDBOX HAS NETWORK ACCESS: no network namespace can be made here (unshare --net needs root or user namespaces), and STACKVM_SANDBOX_ALLOW_NETWORK=1 runs Python anyway"
            : "THE LOCAL SANDBOX CANNOT CUT THE NETWORK: no network namespace can be made here (unshare --net needs root or user namespaces); Python code is refused unless STACKVM_SANDBOX_ALLOW_NETWORK=1",
        );
      }
    }
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    const node = [process.execPath, "--import", tsx, HOST_SCRIPT];
    const command = this.#namespace ? [UNSHARE, "--net", "--", ...node] : node;
    const [file, ...args] = command as [string, ...string[]];
    const child = spawn(file, args, {
      // Only the sandbox's settings: nothing of the stack's environment (keys, credentials).
      env: {
        STACKVM_SANDBOX_NETWORK: this.#namespace ? "external" : "none",
        STACKVM_SANDBOX_ALLOW_NETWORK: this.#allowNetwork ? "1" : "0",
        STACKVM_SANDBOX_MAX_TIME_MS: String(this.#ceiling.time_ms),
        STACKVM_SANDBOX_MAX_MEMORY_MIB: String(this.#ceiling.memory_mib),
        STACKVM_SANDBOX_MAX_OUTPUT_BYTES: String(this.#ceiling.output_bytes),
        STACKVM_SANDBOX_MAX_FILES: String(this.#ceiling.max_files),
        STACKVM_SANDBOX_MAX_FILES_BYTES: String(this.#ceiling.files_bytes),
        ...(this.#openBridge ? { STACKVM_SANDBOX_TEST_OPEN_BRIDGE: "1" } : {}),
        ...(this.#warmPython ? {} : { STACKVM_SANDBOX_WARM_PYTHON: "0" }),
      },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const pending = new Map<number, Pending>();
    const ready = new Promise<void>((resolve, reject) => {
      child.once("exit", (code, signal) => reject(new Error(`it exited (${signal ?? code})`)));
      child.once("error", reject);
      child.on("message", (message: { ready?: boolean }) => {
        if (message.ready) resolve();
      });
    });
    ready.catch(() => {});
    const host: Host = { child, ready, pending };
    child.on("message", (message: { id?: number; response?: unknown; failure?: string }) => {
      if (message.id === undefined) return;
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      clearTimeout(waiting.timer);
      const parsed = SandboxResponse.safeParse(message.response);
      waiting.resolve(
        parsed.success
          ? parsed.data
          : sandboxFailure(
              sandboxError(
                "internal",
                `the sandbox failed: ${message.failure ?? "its answer does not follow the protocol"}`,
              ),
              waiting.limits,
            ),
      );
    });
    child.once("exit", () => {
      if (this.#host === host) this.#host = null;
      for (const [id, waiting] of pending) {
        pending.delete(id);
        clearTimeout(waiting.timer);
        waiting.resolve(
          sandboxFailure(
            sandboxError("internal", "the sandbox process ended during the run"),
            waiting.limits,
          ),
        );
      }
    });
    this.#host = host;
    return host;
  }

  #stop(host: Host): void {
    if (this.#host === host) this.#host = null;
    host.child.kill("SIGKILL");
  }
}

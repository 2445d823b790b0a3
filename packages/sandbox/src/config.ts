/**
 * The sandbox function's configuration: the ceiling of every limit, and how the
 * network is cut for Python. Read once by the entry file, validated with zod; a
 * wrong setting stops the start with a message that names it.
 */
import { DEFAULT_SANDBOX_LIMITS, SandboxLimits } from "@stackvm/core/sandbox-protocol";
import * as z from "zod";

/**
 * How Python's network is cut:
 * - `namespace`: each Python child gets an empty network namespace (`unshare --net`);
 * - `external`: the platform already cut it (on AWS the sandbox's VPC has no
 *   route out; locally the whole sandbox runs in a namespace);
 * - `none`: nothing cuts it, so Python is refused unless `allowNetwork`.
 */
export const NetworkIsolation = z.enum(["namespace", "external", "none"]);
export type NetworkIsolation = z.infer<typeof NetworkIsolation>;

/**
 * The operating-system boundary around Python:
 * - `bubblewrap`: each child in its own namespaces, user and file view (locally);
 * - `instance`: the instance is the boundary (Lambda's Firecracker micro-VM, no
 *   namespaces inside); after each run the runner kills every process of its user
 *   but itself and empties `/tmp`, before the next child starts;
 * - `single-run`: the data function on Lambda: the instance is the boundary and
 *   serves one run, then the process exits so that Lambda starts a fresh
 *   instance for the next; it runs only the data engine (CPython with the data
 *   libraries, its seccomp filter installed by the child), swept as `instance`;
 * - `none`: no boundary; Python is refused unless `allowUncontained`.
 */
export const Containment = z.enum(["bubblewrap", "instance", "single-run", "none"]);
export type Containment = z.infer<typeof Containment>;

export interface SandboxConfig {
  /** No run gets more than this, whatever it asks. */
  ceiling: SandboxLimits;
  network: NetworkIsolation;
  /** The operator's opt-in to run Python where the network cannot be cut. */
  allowNetwork: boolean;
  /** Default: `instance` on Lambda, `bubblewrap` elsewhere. */
  containment?: Containment;
  /** The operator's opt-in to run Python with no OS boundary where bubblewrap cannot make one. */
  allowUncontained?: boolean;
  /** The user id a root stack runs Python children as (default 64123). */
  sandboxUid?: number;
  /** Leave Pyodide's bridge to the host open: only for tests that prove the OS layer alone. */
  openBridge?: boolean;
  /**
   * Boot a Python child in `warm()` (default true). False: the first Python run
   * boots it (a few seconds), and a process that never runs Python never pays
   * for Pyodide (the local stacks of tests that run no Python).
   */
  warmPython?: boolean;
}

const positiveInt = z.coerce.number().int().positive();

/** The environment the entry file reads; every variable is optional. */
export const SandboxEnv = z.object({
  STACKVM_SANDBOX_NETWORK: NetworkIsolation.optional(),
  STACKVM_SANDBOX_ALLOW_NETWORK: z.enum(["0", "1", "true", "false"]).optional(),
  STACKVM_SANDBOX_CONTAINMENT: Containment.optional(),
  STACKVM_SANDBOX_ALLOW_UNCONTAINED: z.enum(["0", "1", "true", "false"]).optional(),
  STACKVM_SANDBOX_UID: z.coerce.number().int().min(1).max(4_294_967_294).optional(),
  /** Tests of the OS layer only: leaves Pyodide's bridge to the host open. */
  STACKVM_SANDBOX_TEST_OPEN_BRIDGE: z.enum(["0", "1"]).optional(),
  /** `0`: boot Python at its first run, not at start (default 1). */
  STACKVM_SANDBOX_WARM_PYTHON: z.enum(["0", "1"]).optional(),
  STACKVM_SANDBOX_MAX_TIME_MS: positiveInt.optional(),
  STACKVM_SANDBOX_MAX_MEMORY_MIB: positiveInt.optional(),
  STACKVM_SANDBOX_MAX_OUTPUT_BYTES: positiveInt.optional(),
  STACKVM_SANDBOX_MAX_FILES: z.coerce.number().int().min(0).optional(),
  STACKVM_SANDBOX_MAX_FILES_BYTES: z.coerce.number().int().min(0).optional(),
  /** Set by Lambda: the function's memory, which bounds what a run may use. */
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: positiveInt.optional(),
  /** Set by Lambda: its presence means the VPC is the network layer. */
  AWS_LAMBDA_FUNCTION_NAME: z.string().optional(),
});

/** What the host process and Pyodide's own start take from the function's memory. */
const LAMBDA_RESERVED_MIB = 384;

/**
 * The configuration from the environment. Without settings: the default limits as
 * the ceiling, the VPC as the network layer on Lambda, a namespace elsewhere.
 *
 * @throws Error naming the variable that is wrong.
 */
export function sandboxConfigFromEnv(env: Record<string, string | undefined>): SandboxConfig {
  const parsed = SandboxEnv.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `sandbox configuration: ${String(issue?.path[0] ?? "environment")} is invalid: ${issue?.message ?? ""}`,
    );
  }
  const e = parsed.data;
  const lambdaMemory = e.AWS_LAMBDA_FUNCTION_MEMORY_SIZE
    ? Math.max(32, e.AWS_LAMBDA_FUNCTION_MEMORY_SIZE - LAMBDA_RESERVED_MIB)
    : Number.POSITIVE_INFINITY;
  const ceiling = SandboxLimits.safeParse({
    time_ms: e.STACKVM_SANDBOX_MAX_TIME_MS ?? DEFAULT_SANDBOX_LIMITS.time_ms,
    memory_mib: Math.min(
      e.STACKVM_SANDBOX_MAX_MEMORY_MIB ?? DEFAULT_SANDBOX_LIMITS.memory_mib,
      lambdaMemory,
    ),
    output_bytes: e.STACKVM_SANDBOX_MAX_OUTPUT_BYTES ?? DEFAULT_SANDBOX_LIMITS.output_bytes,
    max_files: e.STACKVM_SANDBOX_MAX_FILES ?? DEFAULT_SANDBOX_LIMITS.max_files,
    files_bytes: e.STACKVM_SANDBOX_MAX_FILES_BYTES ?? DEFAULT_SANDBOX_LIMITS.files_bytes,
  });
  if (!ceiling.success) {
    const issue = ceiling.error.issues[0];
    throw new Error(
      `sandbox configuration: the ceiling of ${String(issue?.path[0])} is out of range: ${issue?.message ?? ""}`,
    );
  }
  return {
    ceiling: ceiling.data,
    network: e.STACKVM_SANDBOX_NETWORK ?? (e.AWS_LAMBDA_FUNCTION_NAME ? "external" : "namespace"),
    allowNetwork: isOn(e.STACKVM_SANDBOX_ALLOW_NETWORK),
    containment:
      e.STACKVM_SANDBOX_CONTAINMENT ?? (e.AWS_LAMBDA_FUNCTION_NAME ? "instance" : "bubblewrap"),
    allowUncontained: isOn(e.STACKVM_SANDBOX_ALLOW_UNCONTAINED),
    ...(e.STACKVM_SANDBOX_UID ? { sandboxUid: e.STACKVM_SANDBOX_UID } : {}),
    ...(e.STACKVM_SANDBOX_TEST_OPEN_BRIDGE === "1" ? { openBridge: true } : {}),
    ...(e.STACKVM_SANDBOX_WARM_PYTHON === "0" ? { warmPython: false } : {}),
  };
}

function isOn(value: string | undefined): boolean {
  return value === "1" || value === "true";
}

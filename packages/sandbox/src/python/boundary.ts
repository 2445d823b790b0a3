/**
 * Decides, once at start, what stands between Python code and the host: the
 * bubblewrap boundary (locally), the instance sweep (on Lambda), or nothing, in
 * which case Python is refused unless the operator opted in, and says why and
 * what to install.
 */

import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import type { SandboxConfig } from "../config";
import { canUnshareNetwork, findExecutable } from "../host-tools";
import { type Bubblewrap, DEFAULT_SANDBOX_UID, probeBubblewrap } from "./containment";
import { selfAndAncestors, sweepInstance } from "./instance-sweep";
import { childFiles } from "./pyodide-process";

type Log = (
  level: "info" | "warn" | "error",
  message: string,
  fields?: Record<string, unknown>,
) => void;

export interface PythonBoundary {
  bubblewrap: Bubblewrap | null;
  /** A network namespace per child, for an uncontained child only. */
  unshare: string | null;
  /** The instance sweep after each run (Lambda). */
  sweep: (() => Promise<void>) | null;
  /** Why Python is refused, or null. */
  refusal: string | null;
}

/** The boundary this machine can give Python, with a loud log line where it is weaker than asked. */
export function pythonBoundary(config: SandboxConfig, log: Log): PythonBoundary {
  const containment = config.containment ?? "bubblewrap";
  if (containment === "instance" || containment === "single-run") {
    return { bubblewrap: null, unshare: null, sweep: instanceSweep(log), refusal: null };
  }
  let why = "no OS boundary was asked for (STACKVM_SANDBOX_CONTAINMENT=none)";
  if (containment === "bubblewrap") {
    const pyodideDir = dirname(createRequire(import.meta.url).resolve("pyodide/pyodide.mjs"));
    const probe = probeBubblewrap(
      findExecutable("bwrap"),
      childFiles(process.execPath, pyodideDir),
      config.sandboxUid ?? DEFAULT_SANDBOX_UID,
    );
    if (probe.ok) {
      if (probe.how.uid === null && process.getuid?.() === 0) {
        log(
          "warn",
          `sandbox: Python children cannot run as uid ${config.sandboxUid ?? DEFAULT_SANDBOX_UID} (the project's files must be readable by it), so they run as root mapped into their own user namespace`,
          { layer: "user" },
        );
      }
      return { bubblewrap: probe.how, unshare: null, sweep: null, refusal: null };
    }
    why = probe.why;
  }
  if (!config.allowUncontained) {
    log("error", `SANDBOX CANNOT CONTAIN PYTHON: ${why}; Python code is refused`, {
      layer: "os",
    });
    return {
      bubblewrap: null,
      unshare: null,
      sweep: null,
      refusal: `Python is refused: the sandbox cannot put it behind an OS boundary here: ${why}. The operator can install bubblewrap, or accept the risk with STACKVM_SANDBOX_ALLOW_UNCONTAINED=1.`,
    };
  }
  log(
    "warn",
    `SANDBOX RUNS PYTHON WITHOUT AN OS BOUNDARY: ${why}; STACKVM_SANDBOX_ALLOW_UNCONTAINED=1 lets it run behind Node's permission model only`,
    { layer: "os" },
  );
  return { ...uncontainedNetwork(config, log), bubblewrap: null, sweep: null };
}

/** The old path: Node's permission model, and a network namespace per child where one can be made. */
function uncontainedNetwork(
  config: SandboxConfig,
  log: Log,
): { unshare: string | null; refusal: string | null } {
  if (config.network !== "namespace") return noNetworkLayer(config, log, config.network);
  const unshare = findExecutable("unshare");
  if (canUnshareNetwork(unshare)) return { unshare, refusal: null };
  return noNetworkLayer(config, log, "none");
}

function noNetworkLayer(
  config: SandboxConfig,
  log: Log,
  network: "external" | "none" | "namespace",
): { unshare: null; refusal: string | null } {
  if (network === "external") return { unshare: null, refusal: null };
  if (config.allowNetwork) {
    log(
      "warn",
      "SANDBOX HAS NETWORK ACCESS: no network namespace can be made here (unshare --net needs root or user namespaces), and STACKVM_SANDBOX_ALLOW_NETWORK=1 lets Python run anyway",
      { layer: "network" },
    );
    return { unshare: null, refusal: null };
  }
  log(
    "error",
    "SANDBOX CANNOT CUT THE NETWORK: no network namespace can be made here (unshare --net needs root or user namespaces); Python code is refused unless STACKVM_SANDBOX_ALLOW_NETWORK=1",
    { layer: "network" },
  );
  return {
    unshare: null,
    refusal:
      "Python is refused: this sandbox cannot cut the network (no network namespace can be made here). The operator can run it as root or with user namespaces, or accept the risk with STACKVM_SANDBOX_ALLOW_NETWORK=1.",
  };
}

/** On Lambda: after each run, every process of this user but the runner dies and /tmp is emptied. */
function instanceSweep(log: Log): () => Promise<void> {
  const uid = process.getuid?.() ?? -1;
  const keep = selfAndAncestors();
  return async () => {
    try {
      await sweepInstance({ uid, keep: await keep, dirs: [tmpdir()] });
    } catch (error) {
      // A process of a run outlived every kill: this instance must not serve
      // another tenant. The engine refuses further runs; the process ends soon
      // after this answer, so that Lambda replaces the instance.
      log(
        "error",
        `sandbox: the instance cannot be cleaned and is retired: ${(error as Error).message}`,
        {
          layer: "instance",
        },
      );
      setTimeout(() => process.exit(1), 100).unref?.();
      throw error;
    }
  };
}

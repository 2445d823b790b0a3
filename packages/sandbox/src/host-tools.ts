/**
 * The host programs the Python layers use (`prlimit`, `unshare`), found in the
 * usual system folders rather than through PATH, since the children run with an
 * empty environment and the sandbox reads no environment of its own here.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { join } from "node:path";

const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"];

/** The absolute path of an executable in the system folders, or null. */
export function findExecutable(name: string, dirs: readonly string[] = SYSTEM_DIRS): string | null {
  for (const dir of dirs) {
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not here.
    }
  }
  return null;
}

/**
 * True when this process may create a network namespace (`unshare --net`), which
 * needs root or user namespaces. Tried once, at start.
 */
export function canUnshareNetwork(unshare: string | null): boolean {
  if (!unshare) return false;
  const result = spawnSync(unshare, ["--net", "--", process.execPath, "-e", "0"], {
    env: {},
    stdio: "ignore",
    timeout: 10_000,
  });
  return result.status === 0;
}

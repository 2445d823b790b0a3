/**
 * Closes the descriptors a process inherited by accident. A parent's open files
 * that lack close-on-exec (LevelDB's, for one) pass into every child it spawns,
 * and a child that runs generated code could write through them, past every
 * permission check. Node opens all of its own with close-on-exec, so a
 * descriptor above the standard three without that flag was inherited, and goes.
 */
import { closeSync, readdirSync, readFileSync } from "node:fs";

/** O_CLOEXEC as /proc/PID/fdinfo prints `flags` (octal). */
const O_CLOEXEC = 0o2000000;

/**
 * Closes every inherited descriptor above 2 but those in `keep`, and answers
 * which it closed.
 *
 * @example
 * closeInheritedDescriptors([Number(process.env.NODE_CHANNEL_FD)]);
 */
export function closeInheritedDescriptors(keep: readonly number[] = []): number[] {
  const closed: number[] = [];
  for (const entry of readdirSync("/proc/self/fd")) {
    const fd = Number(entry);
    if (fd <= 2 || keep.includes(fd)) continue;
    let flags: number;
    try {
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
      flags = Number.parseInt(/^flags:\s+([0-7]+)/m.exec(info)?.[1] ?? "0", 8);
    } catch {
      continue; // The descriptor of the listing itself, already gone.
    }
    if ((flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Closed meanwhile.
    }
  }
  return closed;
}

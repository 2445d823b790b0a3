/**
 * One stack per data folder. LevelDB locks its own files, but a second
 * `npm start` on the same folder only learned of it from dynalite's "Database is
 * closed"; this lock comes first and names the process that holds the folder.
 *
 * The lock is a file `stack.pid` holding the owner's pid, created exclusively. A
 * file whose pid no longer runs was left by a killed stack and is taken over.
 */
import { open, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";

/** Another live process holds the data folder. */
export class DataFolderBusyError extends Error {
  override readonly name = "DataFolderBusyError";
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `another StackVM (pid ${pid}) is running on the data folder ${dataDir}: stop it first (kill ${pid}), or set STACKVM_DATA_DIR to another folder`,
    );
  }
}

export interface DataLock {
  /** Removes the lock if this process still holds it. */
  release(): Promise<void>;
}

/**
 * Takes the data folder for this process, or throws `DataFolderBusyError`.
 *
 * @example
 * const lock = await lockDataFolder(".stackvm");
 * // ... run the stack ...
 * await lock.release();
 */
export async function lockDataFolder(dataDir: string, pid = process.pid): Promise<DataLock> {
  const file = join(dataDir, "stack.pid");
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, "wx", 0o600);
      await handle.writeFile(`${pid}\n`);
      await handle.close();
      return {
        async release() {
          if ((await holder(file)) === pid) await unlink(file).catch(() => undefined);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let other = await holder(file);
    if (other === null) {
      // Another starter may have created it and not yet written its pid.
      await new Promise((resolve) => setTimeout(resolve, 200));
      other = await holder(file);
    }
    if (other !== null && other !== pid && alive(other)) {
      throw new DataFolderBusyError(dataDir, other);
    }
    // Left by a stack that was killed (or half written): take it over.
    await unlink(file).catch(() => undefined);
  }
  throw new Error(`could not take the lock ${file}: it keeps changing`);
}

async function holder(file: string): Promise<number | null> {
  const text = await readFile(file, "utf8").catch(() => "");
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

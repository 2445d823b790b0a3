/**
 * The child process that runs one Python program in Pyodide. Node runs this file
 * directly (type stripping) under its permission model, so it imports only Node's
 * built-ins and Pyodide (by absolute path), and nothing here is trusted to hold:
 * Pyodide's `js` module reaches this process's globals by design. The boundary is
 * the process itself: an empty environment, read access to the Pyodide files
 * only, no child processes or workers, an OS data limit, no network, and a
 * SIGKILL of its process group at the deadline (see `python-engine.ts`).
 *
 * Modes:
 * - `snapshot <pyodideDir> <file>`: boot Pyodide and save a memory snapshot (run
 *   by the engine once, with no user code, and the only mode allowed to write).
 * - `run <pyodideDir> [fd:3]`: boot (from the snapshot open on fd 3 when given),
 *   print `{"t":"ready"}`, read one request line, run it, print `{"t":"done"}`, exit.
 *
 * Protocol on stdout: one JSON object a line: `ready`, `out`/`err` chunks of the
 * program's output, `done` with the driver's answer.
 */
import { Buffer } from "node:buffer";
import { constants, fstatSync, readSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// Pyodide's Node file system glue reads open flags from process.binding, which the
// permission model forbids; the constants are the same as node:fs exports.
(process as unknown as { binding: (name: string) => unknown }).binding = (name: string) => {
  if (name === "constants") return { fs: constants };
  throw new Error(`process.binding('${name}') is not available in the sandbox`);
};

interface ChildRequest {
  driver: string;
  request: string;
  outputBytes: number;
}

const [mode, pyodideDir, snapshotArg] = process.argv.slice(2);
const runFlags = process.argv.slice(4);
const openBridge = runFlags.includes("open-bridge");
// Captured now: `closeBridge` takes the `process` global away before the program runs.
const exit = process.exit.bind(process);
const stdin = process.stdin;
if (!mode || !pyodideDir) {
  throw new Error("usage: pyodide-child.ts snapshot <pyodideDir> <file> | run <pyodideDir> [fd:3]");
}

/** The snapshot, read with positional reads from an inherited descriptor (its file is already deleted). */
function readSnapshot(fd: number): Uint8Array {
  const size = fstatSync(fd).size;
  const bytes = new Uint8Array(size);
  let offset = 0;
  while (offset < size) {
    const read = readSync(fd, bytes, offset, size - offset, offset);
    if (read === 0) throw new Error("the snapshot ended early");
    offset += read;
  }
  return bytes;
}

function send(message: Record<string, unknown>): void {
  const bytes = Buffer.from(`${JSON.stringify(message)}\n`);
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(1, bytes, offset);
    } catch (error) {
      // A full non-blocking pipe: wait a moment for the engine to read.
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
}

function readLine(): Promise<string> {
  return new Promise((resolve, reject) => {
    // The chunks are kept apart and only the newest is searched: a request of
    // tens of MiB of files searched whole at every chunk took seconds.
    const chunks: string[] = [];
    stdin.setEncoding("utf8");
    stdin.on("data", (chunk: string) => {
      const end = chunk.indexOf("\n");
      if (end < 0) {
        chunks.push(chunk);
        return;
      }
      chunks.push(chunk.slice(0, end));
      stdin.pause();
      resolve(chunks.join(""));
    });
    stdin.on("end", () => reject(new Error("stdin closed before a request")));
  });
}

/**
 * Takes away every handle Python could use on this process (defence in depth;
 * the boundary is the OS around this process): the `js` and `pyodide_js`
 * modules, the Function constructors that any JS object leads to
 * (`x.constructor.constructor`), and the globals that name the host (`process`,
 * `require`, `eval`, ...). What this script needs later is captured above, in
 * closures that Python cannot reach. Off only in the tests that prove the OS
 * layer holds on its own (`STACKVM_SANDBOX_TEST_OPEN_BRIDGE`).
 */
// biome-ignore lint/suspicious/noExplicitAny: Pyodide's API is used through a handful of calls
function closeBridge(pyodide: any): void {
  if (openBridge) return;
  pyodide.runPython(
    "import sys\nfor _name in [n for n in sys.modules if n.split('.')[0] in ('js', 'pyodide_js')]:\n    sys.modules.pop(_name, None)\ndel _name",
  );
  pyodide.unregisterJsModule("js");
  pyodide.unregisterJsModule("pyodide_js");
  // Emscripten's host file systems would mount the host's files through Node's fs.
  const filesystems = pyodide.FS?.filesystems as Record<string, unknown> | undefined;
  if (filesystems) {
    delete filesystems.NODEFS;
    delete filesystems.NODERAWFS;
  }
  // biome-ignore lint/complexity/useArrowFunction: each kind of function has its own constructor
  const kinds = [function () {}, async function () {}, function* () {}, async function* () {}];
  for (const kind of kinds) {
    Object.defineProperty(Object.getPrototypeOf(kind), "constructor", {
      value: undefined,
      writable: false,
      configurable: false,
    });
  }
  // V8 hands `Error.prepareStackTrace` the call sites of every stack it formats,
  // and a WebAssembly frame's `getThis()` is Pyodide's `WebAssembly.Instance`:
  // its exports (`_hiwire_get`) give back the Pyodide API, the Emscripten module
  // and `NODEFS`. Node's own formatter stays, and nothing can replace it.
  Object.defineProperty(Error, "prepareStackTrace", {
    value: Error.prepareStackTrace,
    writable: false,
    configurable: false,
  });
  emptyHandleTable(pyodide);
  const global = globalThis as Record<string, unknown>;
  // Pyodide checks `instanceof Function` at run time, so the global stays a
  // function for that, but it no longer makes functions from strings.
  const refuse = () => {
    throw new EvalError("making code from strings is not available in the sandbox");
  };
  global.Function = new Proxy(Function, { apply: refuse, construct: refuse });
  for (const name of HOST_GLOBALS) {
    try {
      delete global[name];
    } catch {
      // Not configurable: shadow it below.
    }
    if (name in global) {
      Object.defineProperty(global, name, {
        value: undefined,
        writable: false,
        configurable: false,
      });
    }
  }
}

/**
 * Python reads and writes Pyodide's memory (`ctypes`), so it can point a JsProxy
 * at any slot of Pyodide's handle table (hiwire): its ids are small and the
 * same in every run from the snapshot. The slots that hold the Pyodide API, its
 * internals, the Emscripten module (with `NODEFS`) or the globals get an inert
 * object instead; Pyodide reaches these through its own closures, not the table.
 */
// biome-ignore lint/suspicious/noExplicitAny: Pyodide's API is used through a handful of calls
function emptyHandleTable(pyodide: any): void {
  const module = pyodide._module;
  const api = pyodide._api;
  const reachable = new Set<unknown>(
    [pyodide, api, module, api?.config, api?.config?.jsglobals, pyodide.FS, globalThis].filter(
      (value) => value !== undefined && value !== null,
    ),
  );
  const inert = Object.freeze(Object.create(null));
  for (let index = 1; ; index++) {
    let value: unknown;
    try {
      value = module.__hiwire_get(index);
    } catch {
      break;
    }
    if (reachable.has(value)) module.__hiwire_set(index, inert);
  }
  for (const name of ["NODEFS", "NODERAWFS"]) delete module[name];
}

/** Globals that lead to the host or evaluate strings as code. */
const HOST_GLOBALS = [
  "process",
  "require",
  "module",
  "exports",
  "Buffer",
  "global",
  "eval",
  "navigator",
  "fetch",
  "WebSocket",
  "EventSource",
  "XMLHttpRequest",
  "Worker",
  "SharedWorker",
  "importScripts",
];

const { loadPyodide } = (await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href)) as {
  // biome-ignore lint/suspicious/noExplicitAny: Pyodide's API is used through a handful of calls
  loadPyodide: (options: Record<string, unknown>) => Promise<any>;
};
const quiet = () => {};

if (mode === "snapshot") {
  if (!snapshotArg) throw new Error("snapshot mode needs a file");
  const pyodide = await loadPyodide({
    indexURL: pyodideDir,
    jsglobals: {},
    env: {},
    stdout: quiet,
    stderr: quiet,
    _makeSnapshot: true,
  });
  pyodide.runPython("import base64, json, os, sys, traceback\nimport pyodide.code");
  writeFileSync(snapshotArg, pyodide.makeMemorySnapshot());
  process.exit(0);
}

const pyodide = await loadPyodide({
  indexURL: pyodideDir,
  // The `js` module sees an empty object, not this process's globals (a courtesy,
  // not a boundary: JS objects still reach their constructors).
  jsglobals: {},
  env: {},
  stdout: quiet,
  stderr: quiet,
  ...(runFlags.includes("fd:3") ? { _loadSnapshot: readSnapshot(3) } : {}),
});
closeBridge(pyodide);
send({ t: "ready" });
const line = await readLine();
const { driver, request, outputBytes } = JSON.parse(line) as ChildRequest;

let outputLeft = outputBytes;
const decoders = { out: new TextDecoder(), err: new TextDecoder() };
function writer(stream: "out" | "err") {
  return {
    write(bytes: Uint8Array): number {
      if (bytes.length > outputLeft) {
        // Past the limit: hand over what fits and stop here; the engine checks again.
        send({ t: stream, s: decoders[stream].decode(bytes.subarray(0, outputLeft)) });
        send({ t: "done", overflow: true });
        exit(0);
      }
      outputLeft -= bytes.length;
      send({ t: stream, s: decoders[stream].decode(bytes, { stream: true }) });
      return bytes.length;
    },
  };
}
pyodide.setStdout(writer("out"));
pyodide.setStderr(writer("err"));

pyodide.runPython(driver);
const run = pyodide.globals.get("stackvm_run");
const answer: string = await run(request);
send({ t: "done", answer });
exit(0);

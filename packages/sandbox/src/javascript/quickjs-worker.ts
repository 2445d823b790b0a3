/**
 * The worker thread that runs JavaScript in QuickJS (WebAssembly). Node runs this
 * file directly (type stripping), so it imports only packages and types.
 *
 * Each run gets a fresh WebAssembly instance with its own capped memory: nothing
 * of one run's guest state survives into the next, even though the worker is
 * reused. The worker keeps only the compiled module, which the guest cannot
 * write. Limits, in layers: QuickJS's own memory limit, stack limit and interrupt
 * handler (soft), the `WebAssembly.Memory` maximum (hard), and the engine's
 * `worker.terminate()` at the deadline. Any exception on the host side of a run
 * poisons the worker: it says so and the engine replaces it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten";
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from "quickjs-emscripten";
import type { WorkerDone, WorkerRun, WorkerToEngine } from "./worker-messages";

const PAGE = 65_536;
/** What the prebuilt module asks for at start (16 MiB); the cap is on top of the maximum. */
const INITIAL_PAGES = 256;
const QUICKJS_STACK_BYTES = 1024 * 1024;

const port = parentPort;
if (!port) throw new Error("quickjs-worker runs as a worker thread");

const prelude: string = (workerData as { prelude: string }).prelude;
const requireHere = createRequire(createRequire(import.meta.url).resolve("quickjs-emscripten"));
const wasmModule = await WebAssembly.compile(
  readFileSync(requireHere.resolve("@jitl/quickjs-wasmfile-release-sync/wasm")),
);

function send(message: WorkerToEngine): void {
  port?.postMessage(message);
}

port.on("message", (message: WorkerRun) => {
  run(message).then(send, (error: unknown) => {
    // The host side failed: the wasm trapped or the glue threw. Treat the worker as poisoned.
    send({
      type: "done",
      poisoned: true,
      error: {
        code: "internal",
        message: `the JavaScript sandbox failed: ${error instanceof Error ? error.message : String(error)}`,
      },
    });
  });
});
send({ type: "ready" });

async function run(request: WorkerRun): Promise<WorkerDone> {
  const flushes: Array<() => void> = [];
  try {
    return await runGuest(request, flushes);
  } finally {
    for (const flush of flushes) flush();
  }
}

async function runGuest(request: WorkerRun, flushes: Array<() => void>): Promise<WorkerDone> {
  const maxPages = Math.max(
    INITIAL_PAGES + 16,
    Math.floor((request.memoryMib * 1024 * 1024) / PAGE),
  );
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: maxPages });
  const quickjs = await newQuickJSWASMModuleFromVariant(
    newVariant(RELEASE_SYNC, { wasmModule, wasmMemory: memory }),
  );
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(maxPages * PAGE);
  runtime.setMaxStackSize(QUICKJS_STACK_BYTES);

  let outputLeft = request.outputBytes;
  let stop: "timeout" | "output_limit" | null = null;
  // Output goes to the engine in batches (one message per line is too slow for a
  // flood to reach its limit), and at least every 100 ms so that a run the engine
  // terminates still has its output.
  let batch: Array<{ stream: "stdout" | "stderr"; text: string }> = [];
  let batchBytes = 0;
  let flushedAt = Date.now();
  const flush = () => {
    if (batch.length) send({ type: "output", chunks: batch });
    batch = [];
    batchBytes = 0;
    flushedAt = Date.now();
  };
  const emit = (stream: "stdout" | "stderr", text: string) => {
    batch.push({ stream, text });
    batchBytes += text.length;
    if (batchBytes >= 64 * 1024 || Date.now() - flushedAt >= 100) flush();
  };
  flushes.push(flush);
  runtime.setInterruptHandler(() => {
    const now = Date.now();
    if (stop === null && now >= request.deadline) stop = "timeout";
    if (batch.length && now - flushedAt >= 100) flush();
    return stop !== null;
  });
  const vm = runtime.newContext();
  const atMemoryCap = () => memory.buffer.byteLength >= maxPages * PAGE - 2 * 1024 * 1024;

  // The only host function the guest can reach (through console's closure).
  const write = vm.newFunction("write", (fdHandle, textHandle) => {
    if (stop !== null || vm.typeof(textHandle) !== "string") return;
    const fd = vm.getNumber(fdHandle) === 2 ? "stderr" : "stdout";
    const length = lengthOf(vm, textHandle);
    // UTF-8 may take up to 3 bytes a UTF-16 unit; copy only what can fit.
    const text = readString(vm, slice, textHandle, Math.min(length, outputLeft + 1));
    const bytes = Buffer.byteLength(text);
    if (bytes > outputLeft) {
      emit(fd, Buffer.from(text).subarray(0, outputLeft).toString());
      outputLeft = 0;
      stop = "output_limit";
      return;
    }
    outputLeft -= bytes;
    emit(fd, text);
  });

  const setup = vm.evalCode(prelude, "prelude.js");
  if (setup.error)
    throw new Error(`the sandbox prelude failed: ${JSON.stringify(vm.dump(setup.error))}`);
  const helpers = vm.unwrapResult(
    vm.callFunction(
      setup.value,
      vm.undefined,
      write,
      vm.newString(request.inputsJson),
      vm.newString(request.filesJson),
      vm.unwrapResult(vm.evalCode(JSON.stringify(request.variables), "variables.js")),
    ),
  );
  // Taken before the guest runs, so that the guest cannot replace it.
  const slice = vm.unwrapResult(vm.evalCode("String.prototype.slice", "slice.js"));

  const fail = (error: QuickJSHandle): WorkerDone => {
    if (stop === "timeout")
      return limitError("timeout", `the code ran past its time limit of ${request.timeMs} ms`);
    if (stop === "output_limit") {
      return {
        ...limitError("output_limit", `the code printed more than ${request.outputBytes} bytes`),
        truncated: true,
      };
    }
    const described = describe(vm, helpers, error);
    if (/out of memory/i.test(described.message) || atMemoryCap()) {
      return limitError(
        "memory_limit",
        `the code used more than its memory limit of ${request.memoryMib} MiB`,
      );
    }
    const code = described.name === "SyntaxError" ? "syntax_error" : "runtime_error";
    return {
      type: "done",
      error: {
        code,
        message: `${described.name}: ${described.message}`,
        traceback: described.stack,
      },
    };
  };

  let evaluated = vm.evalCode(request.code, "main.js");
  if (evaluated.error && mayNeedFunctionBody(vm, helpers, request.code, evaluated.error)) {
    // Top-level `return` or `await`: run the code as the body of an async function,
    // and keep the first error if that does not parse either.
    for (const body of functionBodies(request.code)) {
      const compiled = vm.evalCode(`(async function () {\n${body}\n})`, "main.js");
      if (compiled.error) continue;
      evaluated = vm.callFunction(compiled.value, vm.undefined);
      break;
    }
  }
  if (evaluated.error) return fail(evaluated.error);
  let value = evaluated.value;
  const settled = settle(vm, runtime, value);
  if ("error" in settled) return fail(settled.error);
  value = settled.value;
  if (vm.typeof(value) === "undefined") {
    const named = vm.evalCode("typeof result === 'undefined' ? undefined : result", "result.js");
    if (!named.error) value = named.value;
  }

  const json = callHelper(vm, helpers, "json", value);
  if (json.error) {
    if (stop !== null) return fail(json.error);
    const described = describe(vm, helpers, json.error);
    return limitError(
      "result_not_json",
      `the result cannot be turned into JSON (${described.message}); return plain objects, arrays, strings, numbers, booleans or null`,
    );
  }
  if (vm.typeof(json.value) !== "string" || lengthOf(vm, json.value) > request.outputBytes) {
    return limitError(
      "output_limit",
      `the result's JSON takes more than ${request.outputBytes} bytes; return less, or write it to a file`,
    );
  }
  const resultJson = vm.getString(json.value);
  if (Buffer.byteLength(resultJson) > request.outputBytes) {
    return limitError(
      "output_limit",
      `the result's JSON takes more than ${request.outputBytes} bytes; return less, or write it to a file`,
    );
  }

  const filesOut = callHelper(vm, helpers, "files");
  if (filesOut.error) return fail(filesOut.error);
  // Base64 and JSON escaping grow the text; anything past twice the budget cannot fit.
  if (
    vm.typeof(filesOut.value) !== "string" ||
    lengthOf(vm, filesOut.value) > request.filesBytes * 2 + 64 * 1024
  ) {
    return limitError(
      "file_limit",
      `the files written weigh more than ${request.filesBytes} bytes; write fewer or smaller files`,
    );
  }
  return { type: "done", resultJson, filesJson: vm.getString(filesOut.value) };
}

function limitError(code: NonNullable<WorkerDone["error"]>["code"], message: string): WorkerDone {
  return { type: "done", error: { code, message } };
}

/** A guest string's length in UTF-16 units, without copying it. */
function lengthOf(vm: QuickJSContext, handle: QuickJSHandle): number {
  if (vm.typeof(handle) !== "string") return 0;
  return vm.getProp(handle, "length").consume((length) => vm.getNumber(length));
}

/** Copies at most `limit` UTF-16 units of a guest string. */
function readString(
  vm: QuickJSContext,
  slice: QuickJSHandle,
  handle: QuickJSHandle,
  limit: number,
): string {
  if (lengthOf(vm, handle) <= limit) return vm.getString(handle);
  const part = vm.callFunction(slice, handle, vm.newNumber(0), vm.newNumber(limit));
  if (part.error || lengthOf(vm, part.value) > limit) return "";
  return vm.getString(part.value);
}

function callHelper(
  vm: QuickJSContext,
  helpers: QuickJSHandle,
  name: string,
  ...args: QuickJSHandle[]
) {
  const fn = vm.getProp(helpers, name);
  return vm.callFunction(fn, vm.undefined, ...args);
}

interface Described {
  name: string;
  message: string;
  stack?: string;
}

function describe(vm: QuickJSContext, helpers: QuickJSHandle, error: QuickJSHandle): Described {
  const text = callHelper(vm, helpers, "describe", error);
  if (text.error || vm.typeof(text.value) !== "string" || lengthOf(vm, text.value) > 20_000)
    return { name: "Error", message: "an error that cannot be shown" };
  try {
    const parsed = JSON.parse(vm.getString(text.value)) as Partial<Described>;
    const stack =
      typeof parsed.stack === "string" && parsed.stack.trim() ? parsed.stack : undefined;
    return {
      name: typeof parsed.name === "string" ? parsed.name : "Error",
      message: typeof parsed.message === "string" ? parsed.message : "",
      ...(stack ? { stack } : {}),
    };
  } catch {
    return { name: "Error", message: "an error that cannot be shown" };
  }
}

/** Statements that a trailing line can start with and that are no expression. */
const NOT_AN_EXPRESSION =
  /^(const|let|var|if|else|for|while|do|switch|case|default|try|catch|finally|function|async|class|return|throw|break|continue|import|export)\b|^[}/]/;

/**
 * The code as an async function body: first with its last line returned when that
 * line is an expression (so that `await` code keeps the last-expression result),
 * then as it is; both end by returning a variable named `result` when there is one.
 */
function functionBodies(code: string): string[] {
  const tail = '\n;return typeof result === "undefined" ? undefined : result;';
  const text = code.trimEnd().replace(/;$/, "");
  // The last statement: after the last newline or semicolon. A wrong cut (a ';'
  // inside a string) does not compile, and the plain body is tried next.
  const cut = Math.max(text.lastIndexOf("\n"), text.lastIndexOf(";"));
  const last = text.slice(cut + 1).trim();
  const bodies = [`${code}${tail}`];
  if (last && !NOT_AN_EXPRESSION.test(last)) {
    bodies.unshift(`${text.slice(0, cut + 1)}\nreturn (${last});${tail}`);
  }
  return bodies;
}

function isSyntaxError(vm: QuickJSContext, helpers: QuickJSHandle, error: QuickJSHandle): boolean {
  return describe(vm, helpers, error).name === "SyntaxError";
}

/** True for a syntax error in code that uses `return` or `await`, which a function body may accept. */
function mayNeedFunctionBody(
  vm: QuickJSContext,
  helpers: QuickJSHandle,
  code: string,
  error: QuickJSHandle,
): boolean {
  return /\b(return|await)\b/.test(code) && isSyntaxError(vm, helpers, error);
}

/** Runs pending jobs until a promise settles; the sandbox has no timers, so a promise either settles now or never. */
function settle(
  vm: QuickJSContext,
  runtime: { executePendingJobs(): { error?: QuickJSHandle } },
  value: QuickJSHandle,
): { value: QuickJSHandle } | { error: QuickJSHandle } {
  let state = vm.getPromiseState(value);
  while (state.type === "pending") {
    const jobs = runtime.executePendingJobs() as { error?: QuickJSHandle; value?: number };
    if (jobs.error) return { error: jobs.error };
    state = vm.getPromiseState(value);
    if (state.type === "pending" && jobs.value === 0) {
      return {
        error: vm.newError({
          name: "Error",
          message:
            "the code's promise never settles: the sandbox has no timers, network or I/O to wait for",
        }),
      };
    }
  }
  if (state.type === "rejected") return { error: state.error };
  return { value: state.value };
}

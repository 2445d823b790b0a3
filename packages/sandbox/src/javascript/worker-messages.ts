/**
 * The messages between the JavaScript engine (main thread) and its QuickJS
 * worker. Types only: the worker imports them with `import type`, which Node's
 * type stripping erases.
 */

/** Run one program; everything is plain data, already checked by the runner. */
export interface WorkerRun {
  type: "run";
  code: string;
  inputsJson: string;
  filesJson: string;
  /** Input keys that become variables (already checked identifiers). */
  variables: string[];
  /** Epoch milliseconds at which the interrupt handler stops the code. */
  deadline: number;
  timeMs: number;
  memoryMib: number;
  outputBytes: number;
  filesBytes: number;
}

/** Error codes the worker can report itself; the engine adds the rest. */
export type WorkerErrorCode =
  | "syntax_error"
  | "runtime_error"
  | "timeout"
  | "memory_limit"
  | "output_limit"
  | "file_limit"
  | "result_not_json"
  | "internal";

export interface WorkerDone {
  type: "done";
  /** The result as JSON text, when the code ended without error. */
  resultJson?: string;
  /** The files written, as JSON text of `{path, encoding, content}[]`. */
  filesJson?: string;
  error?: { code: WorkerErrorCode; message: string; traceback?: string };
  /** The guest printed past the output limit (its output was cut). */
  truncated?: boolean;
  /** The host side of the run failed: the worker must not be reused. */
  poisoned?: boolean;
}

export type WorkerToEngine =
  | { type: "ready" }
  | { type: "output"; chunks: Array<{ stream: "stdout" | "stderr"; text: string }> }
  | WorkerDone;

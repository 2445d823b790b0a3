/**
 * @stackvm/sandbox: the code runner of the sandbox function. JavaScript runs in
 * QuickJS (WebAssembly) in a worker thread, Python in Pyodide in a locked-down
 * child process; see ARCHITECTURE.md for the layers.
 */
export type { NetworkIsolation, SandboxConfig } from "./config";
export { SandboxEnv, sandboxConfigFromEnv } from "./config";
export type { SandboxLog, SandboxRunnerOptions } from "./runner";
export { SandboxRunner } from "./runner";

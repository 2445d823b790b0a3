/** @stackvm/local: the whole system on one machine, with embedded emulators. */
export type { BootstrapNames, BootstrapOptions, BootstrapResult } from "./bootstrap";
export { bootstrap } from "./bootstrap";
export type { ConsoleLogOptions, LogLevel } from "./console-log";
export { consoleLog } from "./console-log";
export type { LlmSummary } from "./llm-summary";
export { llmBannerLines, llmSummary } from "./llm-summary";
export type { LocalSchedulerOptions } from "./local-scheduler";
export { LocalScheduler } from "./local-scheduler";
export type { LocalSandboxOptions } from "./sandbox-invoker";
export { LocalSandbox } from "./sandbox-invoker";
export type { LocalStack, LocalStackOptions } from "./stack";
export { startLocalStack } from "./stack";

/**
 * What only tests set on the local stack: ports they script, a clock they move,
 * a doctor that does not cache. Kept out of `LocalStackOptions`, so that the
 * options an operator's stack reads (`main.ts`) are the production ones and a
 * hook cannot be set by accident; `startLocalStack` takes these as its second
 * argument.
 */
import type { Clock, LlmPort, Resolver, SandboxPort, TerminalHook } from "@stackvm/core";

export interface LocalTestHooks {
  /** How long `GET /v1/doctor` gives its last answer again (default a minute); tests that change the LLM between two checks set 0. */
  doctorCacheMs?: number;
  /** The LLM in place of the configured one (a scripted port). */
  llm?: LlmPort;
  /** The sandbox in place of the stack's own child process. */
  sandbox?: SandboxPort;
  /** Tests of the sandbox's OS layer only: leave Pyodide's bridge to the host open. */
  openSandboxBridge?: boolean;
  /**
   * Boot the own sandbox's Python child at start (default true: the first Python
   * step does not wait for Pyodide). False leaves it to the first Python run: a
   * stack that runs no Python then spends no CPU on Pyodide.
   */
  warmPython?: boolean;
  /** The clock of steps and wakes (tests of `wait` move it instead of sleeping). */
  clock?: Clock;
  /** Name resolution for outgoing requests (tests resolve names to loopback without DNS). */
  resolve?: Resolver;
  /** Hooks that run when a task ends on a branch, before its outgoing webhook (a test makes one throw to play a worker killed there). */
  afterTerminal?: TerminalHook[];
}

/** Every hook's name, checked against the type so that the two cannot drift. */
const HOOK_NAMES = {
  doctorCacheMs: true,
  llm: true,
  sandbox: true,
  openSandboxBridge: true,
  warmPython: true,
  clock: true,
  resolve: true,
  afterTerminal: true,
} satisfies Record<keyof LocalTestHooks, true>;

/**
 * Splits a test's options into the test hooks and the rest, for a helper that
 * takes both in one object (`test/support/stack.ts`).
 */
export function splitTestHooks<T extends LocalTestHooks>(
  options: T,
): { hooks: LocalTestHooks; rest: Omit<T, keyof LocalTestHooks> } {
  const hooks: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key in HOOK_NAMES) hooks[key] = value;
    else rest[key] = value;
  }
  return { hooks: hooks as LocalTestHooks, rest: rest as Omit<T, keyof LocalTestHooks> };
}

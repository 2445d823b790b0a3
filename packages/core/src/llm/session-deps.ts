/**
 * What an LLM session is built from: its own file because the session
 * (`session.ts`) and the calls it makes (`call.ts`) both take it.
 */
import type { LlmPort } from "../ports/llm";
import type { CallWatch } from "./call-watch";
import type { LlmConfig } from "./config";
import type { TraceSink } from "./trace";
import type { LlmBudget, TokenSink } from "./types";

/** The port, config and budget of one step's session, and its optional sinks. */
export interface LlmSessionDeps {
  port: LlmPort;
  config: LlmConfig;
  /** What the branch may still spend when the step starts; this session's calls are subtracted. */
  budget: LlmBudget;
  /** Waits between retries; inject a fake in tests. */
  sleep?: (ms: number) => Promise<void>;
  /** In [0, 1), for the backoff jitter. */
  random?: () => number;
  /** Milliseconds, for `latency_ms`. */
  now?: () => number;
  /** No retry is started past this moment (epoch ms): the queue tries the step again instead. */
  giveUpAt?: number;
  /** Where each call's prompt and answer go; none: no traces are kept. */
  trace?: TraceSink;
  /** Where calls asked with `stream: true` send their text as it is written; none: nothing streams. */
  tokens?: TokenSink;
  /** Told of each attempt as it starts and of each piece of its answer: the call in flight (`CallWatch`). */
  watch?: CallWatch;
}

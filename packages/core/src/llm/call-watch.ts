/**
 * The LLM call in flight, as a task shows it while the model thinks: which call
 * (purpose, model), which attempt, since when, and how many pieces of the answer
 * have arrived when it streams. The session tells a `CallWatch`; the step's
 * watch (`vm/in-flight.ts`) writes it on the branch for `GET /v1/tasks/{id}`.
 */
import type { LlmPurpose } from "../model";

/** One attempt of a call, as it starts. */
export interface CallAttempt {
  purpose: LlmPurpose;
  model: string;
  /** 1 for the first try of this call. */
  attempt: number;
  /** Epoch ms. */
  startedAt: number;
}

/** Hooks of the session for the call in flight; none may throw or block the call. */
export interface CallWatch {
  /** An attempt starts (the first, or a retry). */
  attempt(attempt: CallAttempt): void;
  /** A piece of the streamed answer arrived (one token on OpenAI, llama.cpp and Ollama). */
  delta(): void;
  /** The call ended, answered or failed. */
  done(): void;
}

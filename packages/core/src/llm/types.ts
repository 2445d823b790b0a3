/**
 * The core's LLM layer as the VM and the tools see it. One `LlmSession` serves one
 * step: it picks the model for the role, enforces the budget before each call,
 * retries transient failures, asks for JSON through named `json_schema` formats,
 * sends unparseable answers back for repair, and records every call (with cost)
 * in `calls`, which the step writes into its commit.
 */
import type * as z from "zod";
import type { LlmCall, LlmPurpose } from "../model";
import type { LlmMessage } from "../ports/llm";

/** Which configured model a call uses: `LLM_MODEL`, `REASON_LLM_MODEL`, `EVAL_LLM_MODEL`. */
export type LlmRole = "default" | "reason" | "eval";

export interface GenerateOptions {
  purpose: LlmPurpose;
  role?: LlmRole;
  messages: LlmMessage[];
  /** Ask for any JSON object; the text is then parsed into `value`. */
  json?: boolean;
  /** With `json`: the JSON Schema the answer must follow, sent as a `json_schema` response format. */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  /** Overrides the purpose's output limit (`LLM_MAX_OUTPUT_TOKENS`); lowered to the room the context leaves. */
  maxOutputTokens?: number;
  temperature?: number;
  /** Hand the answer's text to the session's `TokenSink` as it is written (when it has one). */
  stream?: boolean;
}

export interface JsonOptions<T> {
  purpose: LlmPurpose;
  role?: LlmRole;
  messages: LlmMessage[];
  /** The fixed `json_schema` name (`plan`, `plan_update`, `jmp_condition`, `evaluation`, `code`). */
  schemaName: string;
  schema: z.ZodType<T>;
  maxOutputTokens?: number;
  temperature?: number;
  /** Hand the answer's text to the session's `TokenSink` as it is written (when it has one). */
  stream?: boolean;
  /**
   * What the repair asks for when an answer is cut off at the output limit,
   * after "Your answer was cut off at N tokens: " (default "write a shorter answer").
   */
  cutOffHint?: string;
  /**
   * The JSON Schema sent to the server in place of `schema`'s own: a more precise
   * one (the plan language for the namespace's tools) that `schema` still checks
   * the answer against. A server that refuses it (a 400 naming the schema) is
   * asked again with `schema`'s own, and the call's trace says so.
   */
  wireSchema?: Record<string, unknown>;
  /** Receives the accepted answer's reasoning: the server's own field, or its `<think>` text. */
  onReasoning?: (reasoning: string) => void;
}

/**
 * Where a step's streamed LLM text goes while the call runs (`service/token-relay.ts`
 * publishes it for the events stream). Tokens are never stored with the commit.
 */
export interface TokenSink {
  /** A piece of an answer, in order; must not throw. */
  delta(purpose: LlmPurpose, text: string): void;
  /** Publishes what is buffered; called after each streamed call; must not throw. */
  flush(): Promise<void>;
}

export interface LlmSession {
  /** Every call made through this session, in order. */
  readonly calls: LlmCall[];
  /** Free text, or any JSON object (`json: true`) parsed into `value`; `reasoning` when the server sends it apart. */
  generate(
    options: GenerateOptions,
  ): Promise<{ text: string; value?: unknown; reasoning?: string }>;
  json<T>(options: JsonOptions<T>): Promise<T>;
  /**
   * Throws `BudgetExceededError` when the branch has no tokens or dollars left,
   * as every call through the session does first: for spending that does not
   * go through it (a search's embedding of its query).
   */
  checkBudget(): void;
}

/** What a session may still spend; checked before each call. */
export interface LlmBudget {
  /** Tokens left for the branch (undefined: no limit). */
  tokensLeft?: number;
  /** Dollars left for the branch (undefined: no limit). */
  costLeftUsd?: number;
  /** The whole token budget (`max_tokens`), only to say "2,013 of 2,000 used" when it runs out. */
  maxTokens?: number;
  /** The whole cost budget (`max_cost_usd`), only for the message when it runs out. */
  maxCostUsd?: number;
  /**
   * The tenant's month, checked before each call and charged after it, so tasks
   * side by side stop when the month is spent, not when each ends.
   */
  meter?: SpendMeter;
}

/** The tenant's monthly budget as calls are made (`QuotaService.meter`). */
export interface SpendMeter {
  /** Throws `BudgetExceededError` (`monthly_budget_exhausted`) when the month is spent. */
  check(): Promise<void>;
  /** Charges one call's tokens and dollars to the month. */
  spend(tokens: number, costUsd: number): Promise<void>;
}

/** One batch of text of one call, as the events stream sends it (`event: token`). */
export interface TokenEvent {
  branch: string;
  /** The instruction being run (the plan's for the planner's first plan: null). */
  seq_no: number | null;
  /** The commit the step builds on: its commit, once written, has this `parent_id`. */
  parent_id: string | null;
  /** `llm_generate`, or `plan` / `plan_update` for the planner. */
  purpose: LlmPurpose;
  /** True when the instruction writes `final_answer`: this text is the answer being written. */
  final_answer: boolean;
  text: string;
}

/** What the worker knows of the step whose text it publishes. */
export type TokenTarget = Omit<TokenEvent, "purpose" | "text"> & {
  tenant: string;
  taskId: string;
};

/** What a task may spend at most, from the month's budget; absent: no limit. */
export interface BudgetLeft {
  tokens?: number;
  costUsd?: number;
}

/**
 * The LLM port: one chat completion against an OpenAI-compatible server. The
 * adapter (`OpenAiLlm` in @stackvm/aws) translates vendor errors into
 * `RetryableError` (`llm_unreachable`: no answer at all; `llm_timeout`: accepted
 * but not finished in time; `llm_server_error`: a 5xx; `llm_rate_limited`: 429
 * with `retryAfterSeconds`) or a permanent error (`llm_bad_request` for a 4xx
 * other than 408/429 and for 501, quoting the server); retries, repair rounds, cost and budgets live in core's
 * `llm/` layer above this port. With `onDelta`, the adapter asks the server to
 * stream (OpenAI's `stream: true`, Bedrock's `ConverseStream`) and hands each
 * piece of text over as it arrives; the answer it resolves with is the same.
 */
export interface LlmMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface LlmRequest {
  model: string;
  /**
   * Which role's model this is (`default` for the steps, `reason` for plans and
   * plan updates, `eval` for evaluations): a port that serves the roles from
   * different servers routes by it. Absent: `default`.
   */
  role?: "default" | "reason" | "eval";
  messages: LlmMessage[];
  /** Ask for JSON matching a schema: sent as `response_format: {type: "json_schema", json_schema: {name, schema, strict}}`. */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  /** Ask for any JSON object (`response_format: {type: "json_object"}`). */
  jsonObject?: boolean;
  timeoutMs: number;
  /**
   * The setting that set `timeoutMs`, named when the call times out: the step's
   * `LLM_TIMEOUT_MS` unless a caller bounds the call itself (the doctor's cap).
   */
  timeoutSetting?: string;
  maxOutputTokens?: number;
  temperature?: number;
  /**
   * Receives the answer's text as it is written, piece by piece, in order; their
   * concatenation is `LlmResponse.text`. Absent: the adapter need not stream.
   * Must not throw (a watcher's trouble is no reason to fail the call).
   */
  onDelta?: (text: string) => void;
}

export interface LlmResponse {
  text: string;
  /** The model that answered, as the server reports it. */
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Reasoning text when the server returns it separately (`reasoning_content`). */
  reasoning?: string;
  /** Why the model stopped, as the server says it (`stop`, `length`, `content_filter`, ...). */
  finishReason?: string;
}

export interface LlmPort {
  complete(request: LlmRequest): Promise<LlmResponse>;
  /**
   * The context (prompt plus answer, in tokens) the server gives `model`, when the
   * server says (llama.cpp's `/props`, Ollama's `/api/ps`); undefined when it does
   * not or cannot be asked. Must not throw. Absent: the context is not known.
   * With `fresh`, the server is asked again rather than a remembered answer used
   * (a prompt refused for the context asks: the server may have been restarted).
   */
  contextTokens?(
    model: string,
    options?: { role?: LlmRequest["role"]; fresh?: boolean },
  ): Promise<number | undefined>;
  /**
   * The prompt's tokens as the server's own tokenizer counts them (llama.cpp's
   * `POST /tokenize`, with room for its chat template), when it can; undefined
   * otherwise. Must not throw. Asked only for a prompt whose estimate does not fit
   * the context: the estimate is high, and a real count may fit it.
   */
  countTokens?(
    model: string,
    messages: readonly LlmMessage[],
    role?: LlmRequest["role"],
  ): Promise<number | undefined>;
}

/**
 * The llm port over the `openai` package: one chat completion per call against
 * any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio). The client does
 * not retry (`maxRetries: 0`): retries, repairs, budgets and costs are core's. This
 * file's other job is translating the vendor's errors at the boundary.
 */
import {
  isStrictJsonSchema,
  type LlmMessage,
  type LlmPort,
  type LlmRequest,
  type LlmResponse,
  RetryableError,
  StackVMError,
  StepError,
} from "@stackvm/core";
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
} from "openai/resources/chat/completions";
import { ServerContext } from "./server-context";

export interface OpenAiLlmOptions {
  /** `OPENAI_API_KEY`; servers that need none (Ollama) accept any non-empty value. */
  apiKey: string;
  /** `OPENAI_BASE_URL`, e.g. `http://127.0.0.1:11434/v1`; OpenAI's when undefined. */
  baseURL?: string;
  /** For `Retry-After` given as an HTTP date. */
  now?: () => number;
}

/**
 * The LLM and embeddings endpoints are the operator's (`OPENAI_BASE_URL`, often
 * on loopback, Ollama); no tenant setting reaches them. Their clients follow no
 * redirect, so a server there cannot bounce the stack to its own listeners or
 * the metadata address: an OpenAI-compatible API does not redirect.
 */
export const NO_REDIRECTS = { redirect: "error" } as const;

/**
 * @example
 * const llm = new OpenAiLlm({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL });
 * const session = createLlmSession({ port: llm, config: loadLlmConfig(env), budget: {} });
 */
export class OpenAiLlm implements LlmPort {
  private readonly client: OpenAI;
  private readonly now: () => number;
  private readonly contexts: ServerContext;

  /** Takes the key and base URL, or a ready client (its own retries are switched off per call). */
  constructor(options: OpenAiLlmOptions | OpenAI) {
    if (options instanceof OpenAI) {
      this.client = options;
      this.now = Date.now;
    } else {
      this.client = new OpenAI({
        apiKey: options.apiKey,
        baseURL: options.baseURL,
        maxRetries: 0,
        fetchOptions: NO_REDIRECTS,
      });
      this.now = options.now ?? Date.now;
    }
    this.contexts = new ServerContext(this.client.baseURL, this.client.apiKey ?? "", this.now);
  }

  /** The model's context as the server lists it (llama.cpp, Ollama); undefined elsewhere. */
  contextTokens(model: string, options: { fresh?: boolean } = {}): Promise<number | undefined> {
    return this.contexts.tokens(model, options.fresh === true);
  }

  /** The prompt's tokens by the server's tokenizer (llama.cpp's `/tokenize`); undefined elsewhere. */
  countTokens(_model: string, messages: readonly LlmMessage[]): Promise<number | undefined> {
    return this.contexts.count(messages);
  }

  async complete(request: LlmRequest): Promise<LlmResponse> {
    let completion: ChatCompletion;
    try {
      completion = request.onDelta
        ? await this.streamed(request, request.onDelta)
        : await this.client.chat.completions.create(body(request, this.official), {
            timeout: request.timeoutMs,
            maxRetries: 0,
          });
    } catch (error) {
      throw this.translate(error, request);
    }
    return this.response(completion, request);
  }

  /**
   * The same call with `stream: true`: each content delta goes to `onDelta` as it
   * arrives, and the chunks are folded back into one completion, so that the
   * answer, its usage (`stream_options.include_usage`) and its errors read as
   * without streaming. The timeout covers the whole answer, as it does unstreamed.
   */
  private async streamed(
    request: LlmRequest,
    onDelta: (text: string) => void,
  ): Promise<ChatCompletion> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), request.timeoutMs);
    try {
      const stream = await this.client.chat.completions.create(
        { ...body(request, this.official), stream: true, stream_options: { include_usage: true } },
        { timeout: request.timeoutMs, maxRetries: 0, signal: abort.signal },
      );
      const folded = foldChunks(request.model);
      for await (const chunk of stream) {
        const text = folded.add(chunk);
        if (text) onDelta(text);
      }
      // The client ends an aborted stream quietly: a cut answer must not pass for a whole one.
      if (abort.signal.aborted) throw timedOut();
      return folded.completion();
    } catch (error) {
      if (abort.signal.aborted) throw timedOut();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private response(completion: ChatCompletion, request: LlmRequest): LlmResponse {
    // A server that answers 200 with text, or with JSON that is no completion.
    const choice = typeof completion === "object" ? completion?.choices?.[0] : undefined;
    if (choice === undefined) {
      throw new RetryableError(
        "llm_bad_response",
        `the LLM server at ${this.client.baseURL} answered something that is not a chat completion: ${excerpt(completion)}`,
      );
    }
    const message = choice.message as ChatCompletion.Choice["message"] & {
      reasoning_content?: unknown;
      reasoning?: unknown;
    };
    if (message.refusal) {
      throw new StepError("llm_refused", `the model refused: ${message.refusal}`);
    }
    // DeepSeek and vLLM send `reasoning_content`; Ollama and OpenRouter `reasoning`.
    const reasoning = message.reasoning_content ?? message.reasoning;
    return {
      text: message.content ?? "",
      model: completion.model || request.model,
      inputTokens: completion.usage?.prompt_tokens ?? 0,
      outputTokens: completion.usage?.completion_tokens ?? 0,
      ...(typeof reasoning === "string" && reasoning !== "" ? { reasoning } : {}),
      ...(typeof choice.finish_reason === "string" ? { finishReason: choice.finish_reason } : {}),
    };
  }

  /**
   * Vendor errors to the core's: what to retry, what to record, what to fail on.
   * Three temporary failures are told apart, because they call for different
   * waits (`vm/retrying.ts`): no answer at all (`llm_unreachable`: refused, DNS,
   * reset), an answer that did not finish in time (`llm_timeout`: the server
   * works, slowly) and a 5xx (`llm_server_error`). A 4xx other than 408/429,
   * and a 501 (the server does not do this at all), is permanent:
   * `llm_bad_request`, quoting the server.
   */
  private translate(error: unknown, request: LlmRequest): unknown {
    const where = `the LLM server at ${this.client.baseURL}`;
    if (error instanceof APIConnectionTimeoutError) {
      return new RetryableError(
        "llm_timeout",
        request.timeoutSetting === undefined
          ? `${where} accepted the request but did not finish its answer within ${request.timeoutMs} ms (LLM_TIMEOUT_MS): the server works, slowly; a model on a CPU may need more, raise LLM_TIMEOUT_MS`
          : `${where} accepted the request but did not finish its answer within ${request.timeoutMs} ms (${request.timeoutSetting})`,
        undefined,
        error,
      );
    }
    if (error instanceof APIConnectionError) {
      return new RetryableError(
        "llm_unreachable",
        `${where} could not be reached: ${connectionCause(error)}`,
        undefined,
        error,
      );
    }
    if (error instanceof SyntaxError) {
      return new RetryableError(
        "llm_bad_response",
        `${where} answered a body that is not JSON: ${error.message}`,
        undefined,
        error,
      );
    }
    if (error instanceof APIError && isUnreadableAnswer(error)) {
      // Asking the same again stops at the same limit: the repair loop asks for less.
      return new StepError(
        "llm_output_cut_off",
        `${where} answered${error.status === undefined ? " in its stream" : ` ${error.status}`}: ${error.message}: the server could not read its own answer in the format asked, which llama.cpp answers when a structured answer stops at the output limit (its own -n, or LLM_MAX_OUTPUT_TOKENS): ask for less, or raise the limit if the server's context has room`,
        { status: error.status ?? null, code: error.code },
        error,
      );
    }
    if (!(error instanceof APIError) || error.status === undefined) return error;

    const said = `${where} answered ${error.status}: ${error.message}`;
    const status = error.status;
    if (status === 429 && error.code === "insufficient_quota") {
      // Retrying will not help until someone pays: fail the branch with the reason.
      return new StackVMError("unauthorized", "llm_quota_exceeded", `${said} (quota exhausted)`, {
        cause: error,
      });
    }
    if (status === 429) {
      return new RetryableError(
        "llm_rate_limited",
        said,
        retryAfterSeconds(error.headers, this.now()),
        error,
      );
    }
    if (status === 408) return new RetryableError("llm_timeout", said, undefined, error);
    if (status >= 500 && status !== 501) {
      return new RetryableError("llm_server_error", said, undefined, error);
    }
    if (status === 401) {
      return new StackVMError(
        "unauthorized",
        "llm_unauthorized",
        `${said}: OPENAI_API_KEY is wrong or revoked for this server (OPENAI_BASE_URL)`,
        { cause: error },
      );
    }
    if (status === 403) {
      return new StackVMError(
        "unauthorized",
        "llm_forbidden",
        `${said}: the key in OPENAI_API_KEY may not use model '${request.model}'`,
        { cause: error },
      );
    }
    if (status === 404) {
      return new StackVMError(
        "not_found",
        "llm_model_not_found",
        `${said}: check that model '${request.model}' (LLM_MODEL, REASON_LLM_MODEL, EVAL_LLM_MODEL) exists there and that OPENAI_BASE_URL ends in /v1`,
        { cause: error },
      );
    }
    if (isContextOverflow(error)) {
      return new StepError(
        "llm_context_exceeded",
        `${said}: the prompt does not fit the model's context; give the server a larger context (llama-server -c, Ollama OLLAMA_CONTEXT_LENGTH) or shorten the goal and inputs, and set LLM_CONTEXT_TOKENS to the context if the server does not report it, so that prompts are measured before they are sent`,
        { status, code: error.code },
        error,
      );
    }
    // 400, 409, 413, 422, and 501 (the server does not implement this): asking the
    // same again gets the same answer. A plan update may ask differently.
    return new StepError(
      "llm_bad_request",
      `${said} (a permanent refusal: not retried)`,
      { status, code: error.code },
      error,
    );
  }

  /** OpenAI's own API: it wants `max_completion_tokens`, which other servers may not read. */
  private get official(): boolean {
    const host = new URL(this.client.baseURL).hostname;
    return host === "api.openai.com" || host.endsWith(".openai.azure.com");
  }
}

/**
 * llama.cpp's 500 when its chat parser cannot read the model's answer in the
 * format asked ("The model produced output that does not match the expected
 * ... format"): with a grammar that held the answer to the schema, that is an
 * answer cut off before its end. A 500 for any other cause stays a server error.
 */
function isUnreadableAnswer(error: InstanceType<typeof APIError>): boolean {
  // A 500, or (streamed) an error event after the answer began.
  return (
    (error.status === 500 || error.status === undefined) &&
    /produced output that does not match the expected .*format/i.test(error.message)
  );
}

/**
 * A server's "the prompt is too long" refusal: llama.cpp's `exceed_context_size_error`
 * ("request (4204 tokens) exceeds the available context size (4096 tokens)"),
 * OpenAI's and vLLM's `context_length_exceeded` ("maximum context length is ...").
 */
function isContextOverflow(error: InstanceType<typeof APIError>): boolean {
  if (error.status !== 400 && error.status !== 413) return false;
  const type = (error.error as { type?: unknown } | undefined)?.type;
  if (error.code === "context_length_exceeded" || type === "exceed_context_size_error") return true;
  return /exceeds? the available context|maximum context length|context length exceeded|context_length_exceeded|too many tokens/i.test(
    error.message,
  );
}

function body(request: LlmRequest, official: boolean): ChatCompletionCreateParamsNonStreaming {
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: request.model,
    messages: request.messages,
  };
  if (request.jsonSchema !== undefined) {
    const { name, schema } = request.jsonSchema;
    // Strict mode rejects schemas outside its subset: ask for it only when it fits.
    params.response_format = {
      type: "json_schema",
      json_schema: { name, schema, strict: isStrictJsonSchema(schema) },
    };
  } else if (request.jsonObject) {
    params.response_format = { type: "json_object" };
  }
  if (request.maxOutputTokens !== undefined) {
    // OpenAI's own API refuses `max_tokens` for its reasoning models; llama.cpp read
    // only `max_tokens` until 2026 and Ollama, vLLM and LM Studio all read it.
    if (official) params.max_completion_tokens = request.maxOutputTokens;
    else params.max_tokens = request.maxOutputTokens;
  }
  if (request.temperature !== undefined) params.temperature = request.temperature;
  return params;
}

/**
 * Seconds to wait, from `retry-after-ms` (OpenAI's), else `retry-after` as
 * seconds or an HTTP date. Undefined when neither says.
 */
export function retryAfterSeconds(
  headers: Headers | undefined,
  now: number = Date.now(),
): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

const timedOut = () =>
  new APIConnectionTimeoutError({ message: "the streamed answer took too long" });

/**
 * Folds a stream of chunks into the completion the server would have answered
 * unstreamed: content and reasoning concatenated, the last finish reason, the
 * usage of the final chunk. `add` returns the chunk's new content.
 */
function foldChunks(model: string) {
  let content = "";
  let reasoning = "";
  let refusal = "";
  let finish: ChatCompletion.Choice["finish_reason"] | null = null;
  let answeredModel = "";
  let usage: ChatCompletion["usage"];
  return {
    add(chunk: ChatCompletionChunk): string {
      if (chunk.model) answeredModel = chunk.model;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) return "";
      const delta = choice.delta as ChatCompletionChunk.Choice.Delta & {
        reasoning_content?: unknown;
        reasoning?: unknown;
      };
      const thought = delta.reasoning_content ?? delta.reasoning;
      if (typeof thought === "string") reasoning += thought;
      if (delta.refusal) refusal += delta.refusal;
      if (choice.finish_reason) finish = choice.finish_reason;
      const text = delta.content ?? "";
      content += text;
      return text;
    },
    completion(): ChatCompletion {
      const message = {
        role: "assistant" as const,
        content,
        refusal: refusal || null,
        ...(reasoning ? { reasoning_content: reasoning } : {}),
      };
      return {
        id: "streamed",
        object: "chat.completion",
        created: 0,
        model: answeredModel || model,
        choices: [{ index: 0, message, finish_reason: finish ?? "stop", logprobs: null }],
        ...(usage ? { usage } : {}),
      };
    },
  };
}

/**
 * What the connection failure was, from the fetch error the client wraps
 * (`ECONNREFUSED`, `ENOTFOUND`, `ECONNRESET`): the client's own message says only
 * "Connection error.".
 */
export function connectionCause(error: Error): string {
  const codes: string[] = [];
  for (let e: unknown = error; e instanceof Error && codes.length < 5; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && !codes.includes(code)) codes.push(code);
    if (e !== error && e.message && !codes.includes(e.message)) codes.push(e.message);
  }
  return codes.length === 0 ? error.message : `${error.message} (${codes.join(": ")})`;
}

function excerpt(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return (text ?? String(value)).slice(0, 200);
}

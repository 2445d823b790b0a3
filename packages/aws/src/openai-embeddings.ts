/**
 * The embeddings port over the `openai` package (`POST /v1/embeddings`) against
 * any OpenAI-compatible server: OpenAI, Ollama (`nomic-embed-text`), vLLM. As
 * for chat, the client does not retry; vendor errors become core's here.
 */
import {
  type EmbeddingPort,
  type EmbeddingRequest,
  type EmbeddingResponse,
  RetryableError,
  StepError,
} from "@stackvm/core";
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import { connectionCause, NO_REDIRECTS, retryAfterSeconds } from "./openai-llm";

export class OpenAiEmbeddings implements EmbeddingPort {
  private readonly client: OpenAI;

  /** Takes the same key and base URL as the LLM (`OPENAI_API_KEY`, `OPENAI_BASE_URL`). */
  constructor(options: { apiKey: string; baseURL?: string }) {
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      maxRetries: 0,
      fetchOptions: NO_REDIRECTS,
    });
  }

  async embed(request: EmbeddingRequest): Promise<EmbeddingResponse> {
    const where = `the embedding server at ${this.client.baseURL}`;
    let answer: OpenAI.Embeddings.CreateEmbeddingResponse;
    try {
      answer = await this.client.embeddings.create(
        { model: request.model, input: request.input, encoding_format: "float" },
        { timeout: request.timeoutMs, maxRetries: 0 },
      );
    } catch (error) {
      throw translateEmbeddingError(error, where, request);
    }
    const data = Array.isArray(answer?.data)
      ? [...answer.data].sort((a, b) => a.index - b.index)
      : null;
    if (data === null || data.some((d) => !Array.isArray(d.embedding))) {
      throw new RetryableError(
        "embedding_bad_response",
        `${where} answered something that is not a list of embeddings`,
      );
    }
    return {
      vectors: data.map((d) => d.embedding),
      model: answer.model || request.model,
      inputTokens: answer.usage?.prompt_tokens ?? 0,
    };
  }
}

/**
 * The embedding server's errors, told apart as the LLM's are (`openai-llm.ts`):
 * no answer, a slow one and a 5xx are temporary; a 4xx other than 408/429, and
 * a 501 (llama.cpp's "start it with --embeddings"), are permanent and quoted.
 */
function translateEmbeddingError(
  error: unknown,
  where: string,
  request: EmbeddingRequest,
): unknown {
  const setting = request.timeoutSetting ?? "LLM_TIMEOUT_MS";
  if (error instanceof APIConnectionTimeoutError) {
    return new RetryableError(
      "embedding_timeout",
      `${where} accepted the request but did not answer within ${request.timeoutMs} ms (${setting})`,
      undefined,
      error,
    );
  }
  if (error instanceof APIConnectionError) {
    return new RetryableError(
      "embedding_unreachable",
      `${where} could not be reached: ${connectionCause(error)}`,
      undefined,
      error,
    );
  }
  if (!(error instanceof APIError) || error.status === undefined) return error;
  const said = `${where} answered ${error.status}: ${error.message}`;
  if (error.status === 429) {
    return new RetryableError(
      "embedding_rate_limited",
      said,
      retryAfterSeconds(error.headers, Date.now()),
      error,
    );
  }
  if (error.status === 408) return new RetryableError("embedding_timeout", said, undefined, error);
  if (error.status >= 500 && error.status !== 501) {
    return new RetryableError("embedding_server_error", said, undefined, error);
  }
  return new StepError(
    "embedding_failed",
    error.status === 501
      ? `${said} (the server does not serve embeddings as it runs: not retried)`
      : `${said}: check that EMBEDDING_MODEL '${request.model}' is an embedding model that server has (not retried)`,
    { status: error.status },
    error,
  );
}

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
import OpenAI, { APIConnectionError, APIError } from "openai";
import { NO_REDIRECTS, retryAfterSeconds } from "./openai-llm";

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
      if (error instanceof APIConnectionError) {
        throw new RetryableError(
          "embedding_unavailable",
          `${where} could not be reached or did not answer in time: ${error.message}`,
          undefined,
          error,
        );
      }
      if (error instanceof APIError && error.status !== undefined) {
        const said = `${where} answered ${error.status}: ${error.message}`;
        if (error.status === 429)
          throw new RetryableError(
            "embedding_rate_limited",
            said,
            retryAfterSeconds(error.headers, Date.now()),
            error,
          );
        if (error.status === 408 || error.status >= 500)
          throw new RetryableError("embedding_unavailable", said, undefined, error);
        throw new StepError(
          "embedding_failed",
          `${said}: check that EMBEDDING_MODEL '${request.model}' is an embedding model that server has`,
          { status: error.status },
          error,
        );
      }
      throw error;
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

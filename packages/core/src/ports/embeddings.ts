/**
 * The embeddings port: vectors for texts from an OpenAI-compatible server
 * (`/v1/embeddings`; OpenAI, Ollama, vLLM). The adapter (`OpenAiEmbeddings` in
 * @stackvm/aws) translates vendor errors as the llm port's does: `RetryableError`
 * for no answer (`embedding_unreachable`), a slow one (`embedding_timeout`), 5xx
 * (`embedding_server_error`) and 429; `StepError` (`embedding_failed`, quoting the
 * server) for other 4xx and 501, which are not retried. Batching, retries and cost
 * live in core's `knowledge/embedder.ts`.
 */
export interface EmbeddingRequest {
  model: string;
  /** One vector per text, in order. */
  input: string[];
  timeoutMs: number;
  /** The setting that set `timeoutMs`, named when the call times out (as `LlmRequest.timeoutSetting`). */
  timeoutSetting?: string;
}

export interface EmbeddingResponse {
  vectors: number[][];
  /** The model that answered, as the server reports it. */
  model: string;
  inputTokens: number;
}

export interface EmbeddingPort {
  embed(request: EmbeddingRequest): Promise<EmbeddingResponse>;
}

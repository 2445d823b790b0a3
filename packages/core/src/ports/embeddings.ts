/**
 * The embeddings port: vectors for texts from an OpenAI-compatible server
 * (`/v1/embeddings`; OpenAI, Ollama, vLLM). The adapter (`OpenAiEmbeddings` in
 * @stackvm/aws) translates vendor errors as the llm port's does: `RetryableError`
 * for 429, 5xx and timeouts, `StepError` for other 4xx. Batching, retries and cost
 * live in core's `knowledge/embedder.ts`.
 */
export interface EmbeddingRequest {
  model: string;
  /** One vector per text, in order. */
  input: string[];
  timeoutMs: number;
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

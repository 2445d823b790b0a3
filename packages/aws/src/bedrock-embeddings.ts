/**
 * The embeddings port over Amazon Bedrock's InvokeModel, for Titan Text
 * Embeddings v2 (`amazon.titan-embed-text-v2:0`, 1,024 dimensions, normalized):
 * one text per request, as that model takes, a few requests at once. Errors are
 * translated as for chat (bedrock-errors.ts), with `embedding_` codes.
 */
import { type BedrockRuntimeClient, InvokeModelCommand } from "@aws-sdk/client-bedrock-runtime";
import {
  type EmbeddingPort,
  type EmbeddingRequest,
  type EmbeddingResponse,
  RetryableError,
} from "@stackvm/core";
import { translateBedrockError } from "./bedrock-errors";
import { type BedrockOptions, bedrockClient } from "./bedrock-llm";

/** Requests in flight for one batch: the embedder sends batches of up to 64 texts. */
const CONCURRENCY = 8;

/**
 * @example
 * const embeddings = new BedrockEmbeddings({ region: "us-east-1" });
 * await embeddings.embed({ model: "amazon.titan-embed-text-v2:0", input: ["Kyoto"], timeoutMs: 30_000 });
 */
export class BedrockEmbeddings implements EmbeddingPort {
  private readonly client: Pick<BedrockRuntimeClient, "send">;
  private readonly region: string;

  constructor(options: BedrockOptions) {
    this.client = bedrockClient(options);
    this.region = options.region;
  }

  async embed(request: EmbeddingRequest): Promise<EmbeddingResponse> {
    const vectors: number[][] = new Array(request.input.length);
    let inputTokens = 0;
    let next = 0;
    const worker = async () => {
      while (next < request.input.length) {
        const index = next++;
        const answer = await this.embedOne(request, request.input[index]!);
        vectors[index] = answer.embedding;
        inputTokens += answer.tokens;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, request.input.length) }, worker));
    return { vectors, model: request.model, inputTokens };
  }

  private async embedOne(
    request: EmbeddingRequest,
    text: string,
  ): Promise<{ embedding: number[]; tokens: number }> {
    let body: Uint8Array | undefined;
    try {
      const output = await this.client.send(
        new InvokeModelCommand({
          modelId: request.model,
          contentType: "application/json",
          accept: "application/json",
          body: JSON.stringify({ inputText: text, normalize: true }),
        }),
        { abortSignal: AbortSignal.timeout(request.timeoutMs) },
      );
      body = output.body;
    } catch (error) {
      throw translateBedrockError(error, {
        kind: "embedding",
        model: request.model,
        region: this.region,
        timeoutMs: request.timeoutMs,
        settings: "EMBEDDING_MODEL",
      });
    }
    let answer: { embedding?: unknown; inputTextTokenCount?: unknown } | undefined;
    try {
      answer = JSON.parse(new TextDecoder().decode(body));
    } catch {
      answer = undefined;
    }
    if (!Array.isArray(answer?.embedding)) {
      throw new RetryableError(
        "embedding_bad_response",
        `Bedrock in ${this.region} (model '${request.model}') answered something that is not an embedding; EMBEDDING_MODEL must be a Titan text embedding model such as amazon.titan-embed-text-v2:0`,
      );
    }
    const tokens = answer.inputTextTokenCount;
    return {
      embedding: answer.embedding as number[],
      tokens: typeof tokens === "number" ? tokens : 0,
    };
  }
}

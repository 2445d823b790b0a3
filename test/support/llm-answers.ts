/**
 * What the scripted LLM server answers with, shared by its OpenAI and Bedrock
 * dialects: faults to inject, replies, the requests it records, and its
 * deterministic embeddings and token counts.
 */
import type { IncomingHttpHeaders } from "node:http";

/** A failure to inject instead of an answer. */
export type Fault =
  /** 429 with `Retry-After: retryAfter` (seconds) and/or `retry-after-ms`. */
  | { fault: "429"; retryAfter?: number; retryAfterMs?: number }
  | { fault: "500"; message?: string }
  /** Holds the response for `ms`, then answers 504 if the client is still there. */
  | { fault: "hang"; ms: number }
  /** Answers `answer` (any answer but a fault) after `ms`: a server that works, slowly. */
  | { fault: "slow"; ms: number; answer: unknown }
  /** Closes the connection without a byte of answer: a server that died (a reset). */
  | { fault: "close" }
  /** A 200 whose body claims to be JSON and is not. */
  | { fault: "malformed" }
  /** A well-formed completion whose content is not JSON. */
  | { fault: "bad_json" }
  /** Any status with an OpenAI-style error body, e.g. 401 or 400. */
  | { fault: "status"; status: number; message?: string; code?: string };

/** A completion with more than content: reasoning, a finish reason, a refusal. */
export class Reply {
  constructor(
    readonly content: string | null,
    readonly extra: {
      reasoning_content?: string;
      refusal?: string;
      finish_reason?: "stop" | "length" | "content_filter";
    } = {},
  ) {}
}

/**
 * What a rule or a queue gives: a string is sent as the content as is, a `Fault`
 * (a plain object with a string `fault` key) is injected, a
 * `Reply` is sent as built, and any other value is sent as its JSON text (an
 * answer that fails the schema is just such a value).
 */
export type Answer = string | Fault | Reply | unknown;

/** Computes an answer from the request. */
export type ResponderFn = (request: RecordedRequest) => Answer | Promise<Answer>;

/** A fixed answer, or a function of the request. */
export type Responder = Answer | ResponderFn;

/** A chat completion request as the server received it. */
export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  model: string;
  messages: { role: string; content: string }[];
  /** `response_format.json_schema.name`, else "json_object", else "text". */
  schemaName: string;
  responseFormat: Record<string, unknown> | undefined;
}

export type Match = string | ((request: RecordedRequest) => boolean);

/** The dimension of the scripted embeddings. */
export const EMBEDDING_DIMENSIONS = 256;

const STOP_WORDS = new Set(
  "a an and are as at be by for from has have in is it its of on or that the this to was were what which who will with does do did how why when where".split(
    " ",
  ),
);

/**
 * The scripted server's embedding of a text: a hashed bag of words (lowercased,
 * stop words out, each word's FNV-1a hash picks a dimension and a sign), scaled
 * to length 1. Texts that share words are near, so a test can say which chunk
 * must rank first.
 *
 * @example
 * cosine(bagOfWords("Kyoto temples"), bagOfWords("temples of Kyoto")) // 1
 */
export function bagOfWords(text: string): number[] {
  const vector = new Array<number>(EMBEDDING_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOP_WORDS.has(word)) continue;
    let hash = 0x811c9dc5;
    for (let i = 0; i < word.length; i++)
      hash = Math.imul(hash ^ word.charCodeAt(i), 0x01000193) >>> 0;
    vector[hash % EMBEDDING_DIMENSIONS]! += hash & 0x100000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  // A text of stop words only still gets a unit vector: cosine is undefined for zeros.
  if (norm === 0) vector[0] = 1;
  return norm === 0 ? vector : vector.map((x) => x / norm);
}

/** The deterministic token estimate the server reports: 1 token per 4 characters, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** True for an answer that is a fault to inject. */
export function isFault(answer: Answer): answer is Fault {
  return (
    typeof answer === "object" &&
    answer !== null &&
    !Array.isArray(answer) &&
    typeof (answer as { fault?: unknown }).fault === "string"
  );
}

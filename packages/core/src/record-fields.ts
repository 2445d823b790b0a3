/**
 * The few fields that both the records (`model.ts`) and the services' inputs
 * (a task's budget and answer format, an LLM call's purpose) are made of, apart
 * from `model.ts`: a service that checks an input builds these few schemas,
 * not the hundreds of records every API answer has (docs/deploy.md, "Cold
 * starts"). `model.ts` re-exports them.
 */
import * as z from "zod";

export const Budget = z
  .object({
    max_steps: z.number().int().min(1).max(100_000).default(200),
    max_tokens: z.number().int().min(1).optional(),
    max_cost_usd: z.number().positive().optional(),
  })
  .strict();
export type Budget = z.infer<typeof Budget>;

export const LlmPurpose = z.enum([
  "plan",
  "plan_update",
  "jmp_condition",
  "llm_generate",
  "code",
  "evaluation",
  /** Vectors of a search query or of a document's chunks (knowledge). */
  "embedding",
  /** Entities and relationships of one chunk, at ingest (knowledge). */
  "knowledge_graph",
  /** One search of the operator's web search provider (`web_search`): its price, no tokens. */
  "web_search",
]);
export type LlmPurpose = z.infer<typeof LlmPurpose>;

export const ResponseFormat = z.record(z.string(), z.unknown());
export type ResponseFormat = z.infer<typeof ResponseFormat>;
/** The key of a response format that holds the final answer's JSON Schema (vm/answer-schema.ts). */
export const ANSWER_SCHEMA_KEY = "answer_schema";

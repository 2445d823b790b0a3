/** @stackvm/aws */
export type { OpenAiLlmOptions } from "./openai-llm";
export { OpenAiLlm, retryAfterSeconds } from "./openai-llm";

/**
 * The LLM port of functions that never call an LLM (api, scheduler, sweep, DLQ),
 * and of a worker with no LLM configured: each call fails with a step error that
 * says what to set. Kept apart from the OpenAI adapter so that those bundles do
 * not carry the `openai` package.
 */
import { type LlmPort, StackVMError } from "@stackvm/core";

export const unconfiguredLlm: LlmPort = {
  async complete() {
    throw new StackVMError(
      "forbidden",
      "llm_not_configured",
      "no LLM is configured: set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL (any OpenAI-compatible server such as Ollama at http://127.0.0.1:11434/v1) and LLM_MODEL, or LLM_PROVIDER=bedrock and a Bedrock LLM_MODEL (AWS credentials, no key), then restart",
    );
  },
};

/**
 * `llm_generate`: one free-text (or JSON) answer from the LLM. The system message
 * carries the task's goal and response format, so that text written for the
 * final answer comes out in the task's language without every prompt repeating it.
 */
import { LlmGenerateInput } from "./llm-generate-input";
import type { Tool } from "./tool";

export { LlmGenerateInput } from "./llm-generate-input";

/** The `llm_generate` tool. */
export const llmGenerateTool: Tool<LlmGenerateInput> = {
  name: "llm_generate",
  description:
    "Asks the language model for a text: summaries, drafts, translations, extraction, classification, answers from given material. Input: prompt (required), context (optional material), response_format (optional shape of the answer). Result: the generated text as a string, or, when response_format asks for JSON, the parsed JSON value. Text is written in the task's language (its response_format 'lang'). The model has no internet access and knows only what the prompt and context give it plus its training.",
  get input() {
    return LlmGenerateInput();
  },
  // The call and its prompts load with the first call: most steps call other tools.
  run: async (input, context) =>
    (await import("./llm-generate-run")).runLlmGenerate(input, context),
};

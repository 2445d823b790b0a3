/**
 * The adapters only the worker builds, on first use (see `on-first-use.ts`):
 * the OpenAI or Bedrock client for LLM steps and the Lambda client for code and
 * knowledge steps.
 */
import type { KnowledgePort, LlmPort, SandboxPort } from "@stackvm/core";
import type { BedrockOptions } from "./bedrock-llm";
import { onFirstUse } from "./on-first-use";
import type { OpenAiLlmOptions } from "./openai-llm";

/** Any OpenAI-compatible server: loaded by the first LLM call. */
export function lazyOpenAiLlm(options: OpenAiLlmOptions): LlmPort {
  // `contextTokens` too: without it the worker would never measure a prompt against the server's context.
  return onFirstUse<Required<LlmPort>>(["complete", "contextTokens", "countTokens"], async () => {
    const { OpenAiLlm } = await import("./openai-llm");
    return new OpenAiLlm(options);
  });
}

/** Amazon Bedrock's Converse API with the function's role: loaded by the first LLM call. */
export function lazyBedrockLlm(options: BedrockOptions): LlmPort {
  return onFirstUse<LlmPort>(["complete"], async () => {
    const { BedrockLlm } = await import("./bedrock-llm");
    return new BedrockLlm(options);
  });
}

/** The sandbox function, invoked through Lambda: loaded by the first code step. */
export function lazyLambdaSandbox(region: string, functionName: string): SandboxPort {
  return onFirstUse<SandboxPort>(["run"], async () => {
    const { LambdaSandbox, lambdaClient } = await import("./lambda-sandbox");
    return new LambdaSandbox(lambdaClient(region), functionName);
  });
}

/** The knowledge function, invoked through Lambda: loaded by the first search or ingest message. */
export function lazyLambdaKnowledge(region: string, functionName: string): KnowledgePort {
  return onFirstUse<KnowledgePort>(["chunks", "graph", "handle"], async () => {
    const [{ lambdaKnowledge }, { lambdaClient }] = await Promise.all([
      import("./knowledge-function"),
      import("./lambda-sandbox"),
    ]);
    return lambdaKnowledge(lambdaClient(region), functionName);
  });
}

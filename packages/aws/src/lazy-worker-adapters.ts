/**
 * The adapters only the worker builds, on first use (core's `lazyPort`):
 * the OpenAI or Bedrock client for LLM steps and the Lambda client for code and
 * knowledge steps.
 */

import type { KnowledgePort, LlmPort, SandboxPort } from "@stackvm/core";
import { lazyPort } from "@stackvm/core";
import type { BedrockOptions } from "./bedrock-llm";
import type { OpenAiLlmOptions } from "./openai-llm";

/** Any OpenAI-compatible server: loaded by the first LLM call. */
export function lazyOpenAiLlm(options: OpenAiLlmOptions): LlmPort {
  return lazyPort<LlmPort>(async () => {
    const { OpenAiLlm } = await import("./openai-llm");
    return new OpenAiLlm(options);
  });
}

/** Amazon Bedrock's Converse API with the function's role: loaded by the first LLM call. */
export function lazyBedrockLlm(options: BedrockOptions): LlmPort {
  return lazyPort<LlmPort>(async () => {
    const { BedrockLlm } = await import("./bedrock-llm");
    return new BedrockLlm(options);
  });
}

/** The sandbox function, invoked through Lambda: loaded by the first code step. */
export function lazyLambdaSandbox(region: string, functionName: string): SandboxPort {
  return lazyPort<SandboxPort>(async () => {
    const { LambdaSandbox, lambdaClient } = await import("./lambda-sandbox");
    return new LambdaSandbox(lambdaClient(region), functionName);
  });
}

/** The knowledge function, invoked through Lambda: loaded by the first search or ingest message. */
export function lazyLambdaKnowledge(region: string, functionName: string): KnowledgePort {
  return lazyPort<KnowledgePort>(async () => {
    const [{ lambdaKnowledge }, { lambdaClient }] = await Promise.all([
      import("./knowledge-function"),
      import("./lambda-sandbox"),
    ]);
    return lambdaKnowledge(lambdaClient(region), functionName);
  });
}

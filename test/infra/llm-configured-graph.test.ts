/**
 * The API and the scheduler start tasks but get no LLM settings: the deployment
 * tells them whether it has an LLM (STACKVM_LLM_CONFIGURED, from the LLM
 * secrets), so that a goal is refused at once with 422 when there is none. Only
 * the verdict reaches them, never the key.
 */
import { describe, expect, it } from "vitest";
import { handlers } from "./check-graph";
import { functions } from "./infra-graph";
import { evaluateInfra } from "./sst-harness";

const noLlm = { LlmProvider: "openai", OpenaiApiKey: "", OpenaiBaseUrl: "" };

async function configuredIn(secrets: Record<string, string>) {
  const graph = await evaluateInfra({ secrets });
  const envOf = (handler: string) => {
    const fn = functions(graph).find((f) => f.build.handler === handler);
    if (!fn) throw new Error(`no function with handler ${handler}`);
    return fn.environment;
  };
  return { api: envOf(handlers.api), scheduler: envOf(handlers.scheduler) };
}

describe("STACKVM_LLM_CONFIGURED on the functions that start tasks", () => {
  it.each<[string, Record<string, string>, string]>([
    ["no key, no base URL", noLlm, "false"],
    ["an OpenAI key", { ...noLlm, OpenaiApiKey: "sk-test" }, "true"],
    ["a base URL without a key", { ...noLlm, OpenaiBaseUrl: "http://llm.internal/v1" }, "true"],
    ["Ollama (the original StackVM's LLM_PROVIDER)", { ...noLlm, LlmProvider: "ollama" }, "true"],
    [
      "Bedrock",
      {
        ...noLlm,
        LlmProvider: "bedrock",
        LlmModel: "amazon.nova-lite-v1:0",
        ReasonLlmModel: "",
        EvalLlmModel: "",
        EmbeddingModel: "",
      },
      "true",
    ],
  ])("is the right verdict with %s, and carries no key", async (_what, secrets, verdict) => {
    const envs = await configuredIn(secrets);
    // The knowledge function's embeddings follow the LLM's provider and secrets.
    expect(envs.api.STACKVM_EMBEDDINGS_CONFIGURED).toBe(verdict);
    for (const env of [envs.api, envs.scheduler]) {
      expect(env.STACKVM_LLM_CONFIGURED).toBe(verdict);
      expect(env).not.toHaveProperty("OPENAI_API_KEY");
      expect(JSON.stringify(env)).not.toContain("sk-test");
    }
  });
});

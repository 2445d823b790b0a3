/**
 * The doctor on Bedrock: its checks name Amazon Bedrock and say what to fix
 * there (model ids, model access, credentials) instead of the OpenAI settings.
 * The real Bedrock adapters against the scripted server's Converse API.
 */

import { DATA_LIBRARIES, DATA_VERSIONS_PROBE, LlmConfig, type SandboxPort } from "@stackvm/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ScriptedLlm, startScriptedLlm } from "../../../test/support/llm-server";
import { BedrockEmbeddings } from "../../aws/src/bedrock-embeddings";
import { BedrockLlm } from "../../aws/src/bedrock-llm";
import { createDoctor } from "./doctor";

const MODEL = "amazon.nova-lite-v1:0";
const REASON = "anthropic.claude-3-5-haiku-20241022-v1:0";

/** Python's answers to `6 * 7` and to the versions probe, as the sandbox gives them: this test is about the LLM checks. */
const sandbox = {
  run: async ({ code }: { code: string }) => ({
    result:
      code === DATA_VERSIONS_PROBE
        ? Object.fromEntries(
            Object.entries(DATA_LIBRARIES).map(([name, pin]) => [name, pin.version]),
          )
        : 42,
    error: null,
  }),
} as unknown as SandboxPort;

let server: ScriptedLlm;
beforeAll(async () => {
  server = await startScriptedLlm();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

function doctor() {
  const options = {
    region: "us-east-1",
    endpoint: server.bedrockUrl,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  };
  return createDoctor({
    llm: new BedrockLlm(options),
    embeddings: new BedrockEmbeddings(options),
    sandbox,
    llmConfig: LlmConfig.parse({ models: { default: MODEL, reason: REASON, eval: REASON } }),
    embeddingModel: "amazon.titan-embed-text-v2:0",
    baseURL: null,
    providers: { llm: "bedrock", embeddings: "bedrock" },
  });
}

describe("the doctor on Bedrock", () => {
  it("checks each model and the embeddings at Amazon Bedrock", async () => {
    server.on("text", "ok");
    const checks = (await doctor()()).checks;
    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ["llm", "ok"],
      ["llm", "ok"],
      ["embeddings", "ok"],
      ["sandbox", "ok"],
      ["data libraries", "ok"],
    ]);
    expect(checks[0]?.detail).toMatch(
      /^model amazon\.nova-lite-v1:0 \(default\) answered at Amazon Bedrock in \d+ ms$/,
    );
    expect(checks[2]?.detail).toBe(
      "model amazon.titan-embed-text-v2:0 answered at Amazon Bedrock (256 dimensions)",
    );
  });

  it("says what to fix on Bedrock, not in the OpenAI settings", async () => {
    server.on("text", (r) =>
      r.model === REASON
        ? {
            fault: "status",
            status: 403,
            message: "You don't have access to the model with the specified model ID.",
          }
        : { fault: "status", status: 404, message: "The model does not exist." },
    );
    server.queue("embeddings", { fault: "status", status: 403 });
    const [nova, haiku, embeddings] = (await doctor()()).checks;
    expect(nova?.fix).toContain(
      "Bedrock model ids or inference profiles offered in BEDROCK_REGION",
    );
    expect(haiku?.fix).toContain("enable access to the model in the Bedrock console");
    expect(embeddings?.fix).toContain(
      "enable access to amazon.titan-embed-text-v2:0 in the Bedrock console",
    );
    for (const check of [nova, haiku, embeddings]) expect(check?.fix).not.toContain("OPENAI");
  });
});

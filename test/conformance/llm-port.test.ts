/**
 * The llm port's conformance suite, run against each adapter with the real
 * vendor client on loopback: `OpenAiLlm` with the `openai` package against the
 * scripted chat completions server, `BedrockLlm` with
 * `@aws-sdk/client-bedrock-runtime` against the same server's Converse API.
 */
import { BedrockLlm } from "../../packages/aws/src/bedrock-llm";
import { OpenAiLlm } from "../../packages/aws/src/openai-llm";
import { describeLlmPort } from "./llm-port.suite";

describeLlmPort("OpenAiLlm", {
  model: "gpt-4o-mini",
  price: { input: 0.15, output: 0.6 },
  port: (server) => new OpenAiLlm({ apiKey: "sk-test", baseURL: server.url }),
});

describeLlmPort("BedrockLlm", {
  model: "us.amazon.nova-lite-v1:0",
  price: { input: 0.06, output: 0.24 },
  port: (server) =>
    new BedrockLlm({
      region: "us-east-1",
      endpoint: server.bedrockUrl,
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    }),
});

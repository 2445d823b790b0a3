/**
 * What is Bedrock's own in the adapters (the rest is the llm port's conformance
 * suite, test/conformance/llm-port.test.ts): the Converse request on the wire,
 * signed for bedrock; a model that refuses a forced tool; what an access denied
 * or an on-demand refusal says to do; Titan embeddings through InvokeModel.
 */
import type { LlmRequest } from "@stackvm/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { bagOfWords, type ScriptedLlm, startScriptedLlm } from "../../../test/support/llm-server";
import { BedrockEmbeddings } from "./bedrock-embeddings";
import { BedrockLlm } from "./bedrock-llm";

const credentials = { accessKeyId: "test", secretAccessKey: "test" };
const model = "anthropic.claude-3-5-haiku-20241022-v1:0";
const schema = {
  type: "object",
  properties: { result: { type: "boolean" } },
  required: ["result"],
};

let server: ScriptedLlm;
let llm: BedrockLlm;

beforeAll(async () => {
  server = await startScriptedLlm();
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  llm = new BedrockLlm({ region: "eu-west-1", endpoint: server.bedrockUrl, credentials });
});

const request = (extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model,
  messages: [
    { role: "system", content: "Judge the condition." },
    { role: "user", content: "The list:" },
    { role: "user", content: "[]" },
  ],
  timeoutMs: 5_000,
  ...extra,
});

describe("BedrockLlm on the wire", () => {
  it("signs a Converse call for bedrock and forces the schema's tool", async () => {
    server.on("verdict", { result: true });
    const answer = await llm.complete(
      request({
        jsonSchema: { name: "verdict", schema },
        maxOutputTokens: 300,
        temperature: 0.2,
      }),
    );
    expect(answer).toMatchObject({ text: '{"result":true}', model, finishReason: "tool_use" });
    const [sent] = server.requests;
    expect(sent?.path).toBe(`/model/${encodeURIComponent(model)}/converse`);
    expect(sent?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=test\/\d{8}\/eu-west-1\/bedrock\/aws4_request/,
    );
    expect(sent?.body).toEqual({
      system: [{ text: "Judge the condition." }],
      // Two user messages in a row are one turn: Converse wants the roles to alternate.
      messages: [{ role: "user", content: [{ text: "The list:" }, { text: "[]" }] }],
      inferenceConfig: { maxTokens: 300, temperature: 0.2 },
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: "verdict",
              description: expect.stringContaining("'verdict' answer"),
              inputSchema: { json: schema },
            },
          },
        ],
        toolChoice: { tool: { name: "verdict" } },
      },
    });
  });

  it("offers the tool without forcing it to a model that refuses toolChoice, once", async () => {
    server.on("verdict", (req) =>
      (req.body.toolConfig as { toolChoice?: unknown }).toolChoice
        ? {
            fault: "status",
            status: 400,
            message: "This model doesn't support the toolChoice field.",
          }
        : { result: false },
    );
    const ask = request({
      model: "meta.llama3-1-70b-instruct-v1:0",
      jsonSchema: { name: "verdict", schema },
    });
    expect((await llm.complete(ask)).text).toBe('{"result":false}');
    expect((await llm.complete(ask)).text).toBe('{"result":false}');
    const forced = server.requests.map((r) => "toolChoice" in (r.body.toolConfig as object));
    expect(forced).toEqual([true, false, false]);
    expect(server.requests[1]?.messages[1]?.content).toMatch(/calling the tool 'verdict'/);
  });

  it("takes a structured answer given as text, and names an odd schema's tool as Converse allows", async () => {
    server.on("plan_update_v2", '{"result": true}');
    const answer = await llm.complete(
      request({
        messages: [{ role: "user", content: "" }],
        jsonSchema: { name: "plan update.v2", schema },
      }),
    );
    expect(answer.text).toBe('{"result": true}');
    const sent = server.requests[0]!;
    expect(sent.body.messages).toEqual([{ role: "user", content: [{ text: "(empty)" }] }]);
    expect((sent.body.toolConfig as { toolChoice: unknown }).toolChoice).toEqual({
      tool: { name: "plan_update_v2" },
    });
  });

  it("says to enable model access when Bedrock refuses the model", async () => {
    server.on("text", {
      fault: "status",
      status: 403,
      message: "You don't have access to the model with the specified model ID.",
    });
    await expect(llm.complete(request())).rejects.toMatchObject({
      kind: "unauthorized",
      code: "llm_forbidden",
      message: expect.stringMatching(
        /enable access to 'anthropic\.claude-3-5-haiku-20241022-v1:0' in the Bedrock console \(Model access, region eu-west-1\).*bedrock:InvokeModel/,
      ),
    });
  });

  it("names the IAM action and resource the role lacks", async () => {
    const arn = `arn:aws:bedrock:eu-west-1::foundation-model/${model}`;
    server.on("text", {
      fault: "status",
      status: 403,
      message: `User: arn:aws:sts::123456789012:assumed-role/worker/fn is not authorized to perform: bedrock:InvokeModel on resource: ${arn} because no identity-based policy allows the bedrock:InvokeModel action`,
    });
    await expect(llm.complete(request())).rejects.toThrow(
      `the role lacks bedrock:InvokeModel on ${arn}; the stack grants bedrock:InvokeModel on the models named by LLM_MODEL, REASON_LLM_MODEL, EVAL_LLM_MODEL`,
    );
  });

  it("points a model served only through an inference profile at its profile id", async () => {
    server.on("text", {
      fault: "status",
      status: 400,
      message:
        "Invocation of model ID anthropic.claude-3-5-haiku-20241022-v1:0 with on-demand throughput isn't supported. Retry your request with the ID or ARN of an inference profile that contains this model.",
    });
    await expect(llm.complete(request())).rejects.toMatchObject({
      kind: "step",
      code: "llm_bad_request",
      message: expect.stringContaining(`e.g. 'us.${model}'`),
    });
  });

  it("calls refused credentials what they are", async () => {
    server.on("text", {
      fault: "status",
      status: 403,
      code: "UnrecognizedClientException",
      message: "The security token included in the request is invalid.",
    });
    await expect(llm.complete(request())).rejects.toMatchObject({
      kind: "unauthorized",
      code: "llm_unauthorized",
    });
  });
});

describe("BedrockEmbeddings", () => {
  const embeddings = () =>
    new BedrockEmbeddings({ region: "eu-west-1", endpoint: server.bedrockUrl, credentials });

  it("embeds each text through InvokeModel, in order, and counts the tokens", async () => {
    const input = ["Kyoto temples", "Osaka food", "Nara deer"];
    const answer = await embeddings().embed({
      model: "amazon.titan-embed-text-v2:0",
      input,
      timeoutMs: 5_000,
    });
    expect(answer.vectors).toEqual(input.map(bagOfWords));
    expect(answer.inputTokens).toBe(4 + 3 + 3);
    expect(server.embeddingRequests.flat().sort()).toEqual([...input].sort());
  });

  it("retries nothing itself and calls throttling retryable", async () => {
    server.queue("embeddings", { fault: "429" });
    await expect(
      embeddings().embed({ model: "amazon.titan-embed-text-v2:0", input: ["x"], timeoutMs: 5_000 }),
    ).rejects.toMatchObject({ kind: "retryable", code: "embedding_rate_limited" });
  });
});

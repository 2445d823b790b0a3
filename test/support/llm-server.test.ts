import { OpenAiEmbeddings } from "@stackvm/aws";
import { cosine } from "@stackvm/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  bagOfWords,
  estimateTokens,
  Reply,
  type ScriptedLlm,
  startScriptedLlm,
} from "./llm-server";

let llm: ScriptedLlm;

beforeAll(async () => {
  llm = await startScriptedLlm();
});
afterAll(() => llm.close());
beforeEach(() => llm.reset());

function chat(body: Record<string, unknown>) {
  return fetch(`${llm.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k" },
    body: JSON.stringify({
      model: "m",
      messages: [{ role: "user", content: "12345678" }],
      ...body,
    }),
  });
}

const asking = (name: string) => ({
  response_format: { type: "json_schema", json_schema: { name, schema: {} } },
});

async function content(response: Response): Promise<unknown> {
  const body = (await response.json()) as { choices: { message: { content: unknown } }[] };
  return body.choices[0]?.message.content;
}

describe("startScriptedLlm", () => {
  it("answers a chat completion in OpenAI's shape with estimated usage", async () => {
    llm.on("text", "hello world!");
    const response = await chat({});
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-/),
      object: "chat.completion",
      created: expect.any(Number),
      model: "m",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "hello world!" },
          finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
    });
  });

  it("estimates one token per four characters, rounded up", () => {
    expect([estimateTokens(""), estimateTokens("abcd"), estimateTokens("abcde")]).toEqual([
      0, 1, 2,
    ]);
  });

  it("records each request with its schema name, messages and headers", async () => {
    llm.on("plan", { plan: [] }).on("json_object", {});
    await chat(asking("plan"));
    await chat({ response_format: { type: "json_object" } });
    await chat({});
    expect(llm.requests.map((r) => r.schemaName)).toEqual(["plan", "json_object", "text"]);
    expect(llm.requests[0]).toMatchObject({
      path: "/v1/chat/completions",
      model: "m",
      messages: [{ role: "user", content: "12345678" }],
      headers: { authorization: "Bearer k" },
    });
  });

  it("sends JSON values as their text and strings as they are", async () => {
    llm.on("plan", { plan: [1] }).on("code", "```js\n1\n```");
    expect(await content(await chat(asking("plan")))).toBe('{"plan":[1]}');
    expect(await content(await chat(asking("code")))).toBe("```js\n1\n```");
  });

  it("serves a queue in order before the rules", async () => {
    llm.on("plan", "rule").queue("plan", "first", "second");
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await content(await chat(asking("plan"))));
    expect(answers).toEqual(["first", "second", "rule"]);
  });

  it("lets the rule added last win, and matches predicates", async () => {
    llm.on("text", "old").on("text", "new");
    llm.on(
      (r) => r.messages.some((m) => m.content.includes("secret")),
      (r) => `saw ${r.model}`,
    );
    expect(await content(await chat({}))).toBe("new");
    expect(await content(await chat({ messages: [{ role: "user", content: "the secret" }] }))).toBe(
      "saw m",
    );
  });

  it("answers an unmatched request with a 500 naming the schema", async () => {
    const response = await chat(asking("evaluation"));
    expect(response.status).toBe(500);
    expect(JSON.stringify(await response.json())).toContain(
      `no answer for schema 'evaluation' (model m): add llm.on(\\"evaluation\\"`,
    );
  });

  it("injects a 429 with Retry-After", async () => {
    llm.on("text", { fault: "429", retryAfter: 2, retryAfterMs: 1500 });
    const response = await chat({});
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("2");
    expect(response.headers.get("retry-after-ms")).toBe("1500");
  });

  it.each([
    [{ fault: "500" }, 500],
    [{ fault: "status", status: 401 }, 401],
  ])("injects %j", async (fault, status) => {
    llm.on("text", fault);
    const response = await chat({});
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ error: { message: expect.any(String) } });
  });

  it("injects a body that is not JSON and content that is not JSON", async () => {
    llm.queue("text", { fault: "malformed" }, { fault: "bad_json" });
    await expect((await chat({})).json()).rejects.toThrow(SyntaxError);
    const bad = await content(await chat({}));
    expect(() => JSON.parse(String(bad))).toThrow();
  });

  it("holds a hung response, then answers 504 to a client that waited", async () => {
    llm.on("text", { fault: "hang", ms: 50 });
    expect((await chat({})).status).toBe(504);
  });

  it("sends reasoning_content and refusals from a Reply", async () => {
    llm.on("text", new Reply(null, { reasoning_content: "hmm", refusal: "no" }));
    const body = (await (await chat({})).json()) as { choices: { message: unknown }[] };
    expect(body.choices[0]?.message).toEqual({
      role: "assistant",
      content: null,
      reasoning_content: "hmm",
      refusal: "no",
    });
  });

  it("lists models and refuses unknown routes", async () => {
    llm.on("text", "x");
    await chat({});
    const models = await (await fetch(`${llm.url}/models`)).json();
    expect(models).toMatchObject({ object: "list", data: [{ id: "m", object: "model" }] });
    expect((await fetch(`${llm.url}/completions`, { method: "POST" })).status).toBe(404);
    expect(llm.requests).toHaveLength(1);
  });

  it("forgets rules, queues and requests on reset", async () => {
    llm.on("text", "x").queue("text", "y");
    await chat({});
    llm.reset();
    expect(llm.requests).toEqual([]);
    expect((await chat({})).status).toBe(500);
  });

  it("refuses other keys when started with one", async () => {
    const guarded = await startScriptedLlm({ apiKey: "right" });
    try {
      const response = await fetch(`${guarded.url}/models`, {
        headers: { authorization: "Bearer wrong" },
      });
      expect(response.status).toBe(401);
    } finally {
      await guarded.close();
    }
  });

  it("serves embeddings that carry meaning: shared words are near, the same text is identical", async () => {
    const embeddings = new OpenAiEmbeddings({ apiKey: "k", baseURL: llm.url });
    const answer = await embeddings.embed({
      model: "emb",
      input: ["Kyoto temples and shrines", "the shrines of Kyoto", "Rust borrow checker"],
      timeoutMs: 2_000,
    });
    const [a, b, c] = answer.vectors as [number[], number[], number[]];
    expect(cosine(a, b)).toBeGreaterThan(0.6);
    expect(cosine(a, c)).toBeLessThan(0.2);
    expect(a).toEqual(bagOfWords("Kyoto temples and shrines"));
    expect(answer.inputTokens).toBeGreaterThan(0);
    expect(llm.embeddingRequests).toEqual([
      ["Kyoto temples and shrines", "the shrines of Kyoto", "Rust borrow checker"],
    ]);
  });

  it("injects a queued fault into an embeddings request, which the adapter calls retryable", async () => {
    llm.queue("embeddings", { fault: "500" });
    const embeddings = new OpenAiEmbeddings({ apiKey: "k", baseURL: llm.url });
    await expect(
      embeddings.embed({ model: "emb", input: ["x"], timeoutMs: 2_000 }),
    ).rejects.toMatchObject({
      kind: "retryable",
      code: "embedding_server_error",
    });
  });
});

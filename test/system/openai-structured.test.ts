/**
 * Structured outputs through the chat face: `response_format` (`json_object`,
 * `json_schema` with `strict`) becomes the task's answer schema, the plan's
 * answer is checked against it (and repaired by a plan update when it does not
 * validate), and the message's content is that JSON, so that the AI SDK's
 * `generateObject` and LangChain's `withStructuredOutput` work end to end
 * against the local stack with the scripted LLM. Fields a run cannot honour
 * (`tools`, ...) answer 400 naming the field.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { generateObject } from "ai";
import OpenAI from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { call, finish } from "../support/plans";
import { useTestStack } from "../support/stack";

/** The local stack, started once; its scripted LLM reset before each test. */
const t = useTestStack();

const City = z.object({ city: z.string(), temples: z.number().int() });
const KYOTO = { city: "Kyoto", temples: 1600 };
const WRITE = [call(0, "llm_generate", { prompt: "Name the city." }, ["final_answer"])];

/** The tasks with this goal. */
async function tasksOf(goal: string) {
  const list = await t.api("GET", "/v1/tasks?limit=100");
  return list.body.tasks.filter((x: { goal: string }) => x.goal === goal);
}

beforeEach(() => {
  t.llm.on("plan", { reasoning: "one step writes the answer", plan: WRITE });
  t.llm.on("final_answer", KYOTO);
});

describe("structured outputs with the SDKs", () => {
  it("answers the AI SDK's generateObject (json_schema, strict) with the object", async () => {
    const provider = createOpenAICompatible({
      name: "stackvm",
      baseURL: `${t.url}/v1`,
      apiKey: t.apiKey,
      supportsStructuredOutputs: true,
    });
    const { object } = await generateObject({
      model: provider("default"),
      schema: City,
      prompt: "Which city has the most temples?",
    });
    expect(object).toEqual(KYOTO);
    // The step that wrote final_answer asked the model for JSON of the schema.
    const asked = t.llm.requests.find((r) => r.schemaName === "final_answer");
    expect(asked).toBeDefined();
    const planned = t.llm.requests.find((r) => r.schemaName === "plan")!;
    expect(planned.messages.map((m) => m.content).join("\n")).toContain('"temples"');
  });

  it("answers the AI SDK's generateObject at its defaults (json_object) with the object", async () => {
    const provider = createOpenAICompatible({
      name: "stackvm",
      baseURL: `${t.url}/v1`,
      apiKey: t.apiKey,
    });
    const { object } = await generateObject({
      model: provider("default"),
      schema: City,
      prompt: "Which city has the most temples, by json_object?",
    });
    expect(object).toEqual(KYOTO);
  });

  it("answers LangChain's withStructuredOutput (json_schema) with the object", async () => {
    const model = new ChatOpenAI({
      model: "default",
      apiKey: t.apiKey,
      configuration: { baseURL: `${t.url}/v1` },
    }).withStructuredOutput(City, { name: "city", strict: true });
    const answer = await model.invoke("Which city has the most temples, for LangChain?");
    expect(answer).toEqual(KYOTO);
  });
});

describe("the answer schema", () => {
  const schema = {
    type: "object",
    properties: { city: { type: "string" }, temples: { type: "integer" } },
    required: ["city", "temples"],
    additionalProperties: false,
  };
  const asked = (goal: string) => ({
    model: "default",
    messages: [{ role: "user", content: goal }],
    response_format: { type: "json_schema", json_schema: { name: "city", schema, strict: true } },
  });

  it("repairs a plan whose answer does not validate with a plan update", async () => {
    t.llm.on("plan", { reasoning: "assigned", plan: [finish(0, "Kyoto, with some 1,600")] });
    t.llm.on("plan_update", {
      reasoning: "the JSON",
      resume_at: 0,
      plan: [finish(0, { city: "Kyoto", temples: 1600 })],
    });
    const goal = "Repair the answer, please.";
    const answered = await t.api("POST", "/v1/chat/completions", asked(goal));
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body.choices[0].message.content)).toEqual(KYOTO);
    const [task] = await tasksOf(goal);
    const commits = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits?limit=20`);
    const errors = commits.body.commits.filter((c: { type: string }) => c.type === "error");
    expect(errors.map((c: { error: { code: string } }) => c.error.code)).toEqual([
      "final_answer_invalid",
    ]);
    expect(t.llm.requests.map((r) => r.schemaName)).toEqual(["plan", "plan_update"]);
  });

  it("parses a final answer held as JSON text, fenced or not", async () => {
    t.llm.on("plan", {
      reasoning: "text",
      plan: [finish(0, '```json\n{"city": "Nara", "temples": 100}\n```')],
    });
    const answered = await t.api("POST", "/v1/chat/completions", asked("Parse the fenced text."));
    expect(JSON.parse(answered.body.choices[0].message.content)).toEqual({
      city: "Nara",
      temples: 100,
    });
  });

  it("answers an answer that never validates as a failed run in OpenAI's shape", async () => {
    t.llm.on("plan", { reasoning: "never", plan: [finish(0, { city: 7 })] });
    t.llm.on("plan_update", {
      reasoning: "still not",
      resume_at: 0,
      plan: [finish(0, { city: 8 })],
    });
    const client = new OpenAI({ apiKey: t.apiKey, baseURL: `${t.url}/v1` });
    const goal = "Never validate.";
    await expect(
      client.chat.completions.create(asked(goal) as OpenAI.ChatCompletionCreateParamsNonStreaming),
    ).rejects.toMatchObject({
      status: 400,
      code: "task_failed",
      message: expect.stringContaining("final_answer_invalid"),
    });
    expect(await tasksOf(goal)).toHaveLength(1);
  });

  it("answers json_object with a JSON object, and refuses a final answer that is not one", async () => {
    t.llm.on("plan", { reasoning: "list", plan: [finish(0, [1, 2])] });
    t.llm.on("plan_update", { reasoning: "a list", resume_at: 0, plan: [finish(0, [3])] });
    const body = {
      model: "default",
      messages: [{ role: "user", content: "A list is not an object." }],
      response_format: { type: "json_object" },
    };
    const answered = await t.api("POST", "/v1/chat/completions", body);
    expect(answered.status).toBe(400);
    expect(answered.body.error.message).toContain("final_answer_invalid");
  });

  it("refuses a schema that cannot check values before any task starts", async () => {
    const goal = "A broken schema.";
    const body = {
      model: "default",
      messages: [{ role: "user", content: goal }],
      response_format: {
        type: "json_schema",
        json_schema: { name: "bad", schema: { type: "no-such-type" } },
      },
    };
    const refused = await t.api("POST", "/v1/chat/completions", body);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: "invalid_schema",
      message: expect.stringContaining("response_format.answer_schema"),
    });
    expect(await tasksOf(goal)).toHaveLength(0);
  });
});

describe("fields a run cannot honour", () => {
  const base = { model: "default", messages: [{ role: "user", content: "Hi there." }] };
  const refusals: Array<[string, Record<string, unknown>]> = [
    [
      "tools",
      { tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }] },
    ],
    ["tool_choice", { tool_choice: "required" }],
    ["n", { n: 2 }],
    ["logprobs", { logprobs: true }],
    ["modalities", { modalities: ["text", "audio"] }],
  ];
  for (const [field, extra] of refusals) {
    it(`refuses ${field} with a 400 naming it, starting nothing`, async () => {
      const before = t.llm.requests.length;
      const refused = await t.api("POST", "/v1/chat/completions", { ...base, ...extra });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: "unsupported_parameter",
        param: field,
        type: "invalid_request_error",
        message: expect.stringContaining(field),
      });
      expect(t.llm.requests.length).toBe(before);
    });
  }

  it("refuses a response_format of a type OpenAI does not have, naming the field", async () => {
    const refused = await t.api("POST", "/v1/chat/completions", {
      ...base,
      response_format: { type: "xml" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toMatch(/^response_format/);
  });

  it("accepts the sampling fields, tool_choice none and n 1, which the plan decides", async () => {
    t.llm.on("text", "Hello.");
    const answered = await t.api("POST", "/v1/chat/completions", {
      ...base,
      temperature: 0.2,
      max_tokens: 50,
      tool_choice: "none",
      n: 1,
    });
    expect(answered.status).toBe(200);
  });
});

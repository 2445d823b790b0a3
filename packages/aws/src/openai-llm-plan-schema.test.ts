/**
 * What a plan request asks of the server, through the real `openai` client
 * against the scripted server: the plan language as the `json_schema` (a union on
 * `type`, a calling per tool with its input schema), the loose schema when a
 * server refuses the precise one, a user's JSON Schema sent as `json_schema`, and
 * a reasoning model's `<think>` kept as the plan's reasoning.
 */
import {
  type BranchRecord,
  builtinTools,
  createLlmSession,
  LlmConfig,
  lazyPlanner,
  llmGenerateTool,
} from "@stackvm/core";
import { MemoryBlobs, testToolContext } from "@stackvm/core/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Reply, type ScriptedLlm, startScriptedLlm } from "../../../test/support/llm-server";
import { OpenAiLlm } from "./openai-llm";

let server: ScriptedLlm;
let blobs: MemoryBlobs;

beforeAll(async () => {
  server = await startScriptedLlm();
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  blobs = new MemoryBlobs();
});

function session() {
  return createLlmSession({
    port: new OpenAiLlm({ apiKey: "none", baseURL: server.url }),
    config: LlmConfig.parse({
      models: { default: "m", reason: "m", eval: "m" },
      timeoutMs: 5_000,
      maxAttempts: 1,
    }),
    budget: {},
    trace: { blobs, prefix: "t/t1/traces" },
  });
}

const tools = builtinTools();
const branch = {
  tenant_id: "t1",
  config: { goal: "Say hello", inputs: {}, response_format: {}, namespace: { name: "default" } },
} as unknown as BranchRecord;
const planner = lazyPlanner({ clock: { now: () => 0 }, repairRounds: 1 });
const plan = (llm = session(), allowed = new Set(["llm_generate", "run_code"])) =>
  planner.plan({ branch, llm, tools, allowed });
const goodPlan = {
  reasoning: "one step",
  plan: [
    {
      seq_no: 0,
      type: "calling",
      parameters: {
        tool_name: "llm_generate",
        tool_params: { prompt: "Say hello" },
        output_vars: ["final_answer"],
      },
    },
  ],
};

type Schema = Record<string, any>;
const sentSchema = (n: number): Schema =>
  (server.requests[n]?.responseFormat?.json_schema as Schema | undefined)?.schema;

describe("the plan schema on the wire", () => {
  it("is the plan language: instructions by type, a calling per allowed tool with its input schema", async () => {
    server.queue("plan", goodPlan);
    await plan();
    const schema = sentSchema(0);
    expect(schema.required).toEqual(["reasoning", "plan"]);
    const variants: Schema[] = schema.properties.plan.items.anyOf;
    for (const variant of variants) {
      expect(variant.required).toEqual(["seq_no", "type", "parameters"]);
      expect(variant.additionalProperties).toBe(false);
    }
    const types = variants.map((v) => v.properties.type.enum[0]);
    expect(new Set(types)).toEqual(new Set(["reasoning", "assign", "calling", "jmp", "wait"]));
    const callings = variants.filter((v) => v.properties.type.enum[0] === "calling");
    expect(callings.map((c) => c.properties.parameters.properties.tool_name.enum)).toEqual([
      ["llm_generate"],
      ["run_code"],
    ]);
    const runCode = callings[1]!.properties.parameters.properties;
    expect(runCode.tool_params.required).toEqual(["language", "code"]);
    // An enum stays one (a reference there is rare, and the enum guides a small model) ...
    expect(runCode.tool_params.properties.language).toEqual({
      type: "string",
      enum: ["javascript", "python"],
    });
    // ... while any other typed value also takes a `${name}` reference.
    expect(runCode.tool_params.properties.inputs).toEqual({
      anyOf: [{ type: "object", additionalProperties: {} }, { type: "string" }],
    });
    expect(runCode.output_vars).toEqual({
      type: "array",
      items: { type: "string", pattern: "^[A-Za-z0-9_]+$" },
    });
    // Nothing a grammar cannot follow: no length bound (200,000 rules), format or propertyNames.
    expect(JSON.stringify(schema)).not.toMatch(/maxLength|"format"|propertyNames|oneOf/);
    // Free values (assign, context) keep it out of strict mode, and the adapter says so.
    const format = server.requests[0]?.responseFormat as Schema;
    expect(format.json_schema.strict).toBe(false);
  });

  it("adds resume_at for a plan update", async () => {
    server.queue("plan_update", { ...goodPlan, resume_at: 0 });
    await planner.replan({
      branch,
      llm: session(),
      tools,
      allowed: new Set(["llm_generate"]),
      plan: goodPlan.plan as never,
      pc: 0,
      variables: {},
      suggestion: "say it differently",
    });
    expect(sentSchema(0).required).toEqual(["reasoning", "plan", "resume_at"]);
  });

  it("falls back to the loose schema when the server refuses the precise one, and says so in the trace", async () => {
    server.queue(
      "plan",
      {
        fault: "status",
        status: 400,
        message: "JSON schema conversion failed: unsupported keyword",
      },
      goodPlan,
    );
    const llm = session();
    await expect(plan(llm)).resolves.toMatchObject({ reasoning: "one step" });
    expect(sentSchema(0).properties.plan.items.anyOf).toBeDefined();
    expect(sentSchema(1).properties.plan.items.anyOf).toBeUndefined();
    // Both calls are on record: the refused one with its error, the fallback with its trace.
    expect(llm.calls).toHaveLength(2);
    expect(llm.calls[0]?.error?.code).toBe("llm_bad_request");
    const trace = JSON.parse(
      new TextDecoder().decode(
        (await blobs.get("t/t1/traces", llm.calls[1]?.trace ?? "")) ?? undefined,
      ),
    );
    expect(trace.attempts[0].error).toMatch(
      /refused the precise 'plan' schema, so the loose one was sent: .*JSON schema conversion failed/,
    );
  });

  it("does not fall back on a 400 that is not about the schema", async () => {
    server.queue("plan", { fault: "status", status: 400, message: "unknown model" }, goodPlan);
    await expect(plan()).rejects.toMatchObject({ code: "llm_bad_request" });
    expect(server.requests).toHaveLength(1);
  });
});

describe("a reasoning model's thinking", () => {
  it("is kept as the plan's reasoning and never taken for the plan", async () => {
    server.queue(
      "plan",
      `<think>A plan like {"reasoning": "x", "plan": [1]} would be wrong.</think>\n${JSON.stringify(goodPlan)}`,
    );
    const result = await plan();
    expect(result.reasoning).toBe(
      'A plan like {"reasoning": "x", "plan": [1]} would be wrong.\n\none step',
    );
    expect(result.details).toMatchObject({ attempts: 1 });
  });

  it("keeps the server's reasoning field too", async () => {
    server.queue(
      "plan",
      new Reply(JSON.stringify(goodPlan), { reasoning_content: "thought hard" }),
    );
    expect((await plan()).reasoning).toBe("thought hard\n\none step");
  });

  it("is left out of a generated text", async () => {
    server.on("text", "<think>what do they want?</think>\nHello!");
    const answer = await session().generate({
      purpose: "llm_generate",
      messages: [{ role: "user", content: "Greet" }],
    });
    expect(answer).toEqual({ text: "Hello!", reasoning: "what do they want?" });
  });
});

describe("llm_generate's response_format", () => {
  const city = {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  };

  it.each([
    ["under schema", { schema: city, name: "city" }],
    [
      "as OpenAI's json_schema",
      { type: "json_schema", json_schema: { name: "city", schema: city } },
    ],
  ])("carrying a JSON Schema %s goes out as json_schema", async (_, format) => {
    server.queue("city", { city: "Kyoto" });
    const result = await llmGenerateTool.run(
      { prompt: "Name a city", response_format: format },
      testToolContext({ llm: session() }),
    );
    expect(result.value).toEqual({ city: "Kyoto" });
    expect(server.requests[0]?.responseFormat).toEqual({
      type: "json_schema",
      json_schema: { name: "city", schema: city, strict: true },
    });
  });

  it("asking for JSON in words still goes out as json_object", async () => {
    server.on("json_object", { names: ["a"] });
    await llmGenerateTool.run(
      { prompt: "Names", response_format: "a JSON object with names" },
      testToolContext({ llm: session() }),
    );
    expect(server.requests[0]?.responseFormat).toEqual({ type: "json_object" });
  });

  it("fails llm_invalid_json, the documented code, when no answer parses", async () => {
    server.on("city", "not json at all");
    const error = await llmGenerateTool
      .run(
        { prompt: "Name a city", response_format: { schema: city, name: "city" } },
        testToolContext({ llm: session() }),
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "llm_invalid_json" });
  });
});

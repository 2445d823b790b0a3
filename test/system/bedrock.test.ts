/**
 * A goal planned and run with LLM_PROVIDER=bedrock on the local stack: the
 * worker's LLM is `BedrockLlm` with the real Bedrock Runtime client, pointed by
 * AWS_ENDPOINT_URL_BEDROCK_RUNTIME at the scripted server's Converse API,
 * credentials from the default chain (here the environment, on AWS the
 * function's role). The plan comes back as a forced tool's input; the calls'
 * tokens and the Bedrock price land in the ledger; no OpenAI-compatible server
 * is configured, yet the goal is accepted.
 */
import { describe, expect, it, vi } from "vitest";
import type { RecordedRequest } from "../support/llm-server";
import { useTestStack } from "../support/stack";

type Json = Record<string, any>;

// The SDK's default chain reads these first; nothing here reaches AWS.
vi.stubEnv("AWS_ACCESS_KEY_ID", "test");
vi.stubEnv("AWS_SECRET_ACCESS_KEY", "test");
vi.stubEnv("AWS_PROFILE", "");

const MODEL = "us.amazon.nova-lite-v1:0";
const REASON_MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0";

const t = useTestStack({
  env: (llm) => ({
    LLM_PROVIDER: "bedrock",
    LLM_MODEL: MODEL,
    REASON_LLM_MODEL: REASON_MODEL,
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: llm.bedrockUrl,
    OPENAI_BASE_URL: undefined,
    OPENAI_API_KEY: undefined,
  }),
});

const prompt = (r: RecordedRequest) => r.messages.map((m) => m.content).join("\n");

describe("a task on Bedrock", () => {
  it("is planned through a forced tool, run, and priced as Bedrock prices it", async () => {
    t.llm.on("plan", {
      reasoning: "one fact, then the answer",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "llm_generate",
            tool_params: { prompt: "Name one temple in Kyoto." },
            output_vars: ["temple"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${temple}" } },
      ],
    });
    t.llm.on("text", (r) => (prompt(r).includes("one temple") ? "Kinkaku-ji" : "?"));

    const created = await t.api("POST", "/v1/tasks", { goal: "Name a temple in Kyoto." });
    expect(created.status).toBe(202);
    const task = await t.waitForTask(created.body.task_id);
    expect(task).toMatchObject({ status: "completed", final_answer: "Kinkaku-ji" });

    // Every call went to Converse: the plan as the 'plan' tool's input, forced, on the reason model.
    expect(t.llm.requests.map((r) => [r.path.split("/")[1], r.schemaName, r.model])).toEqual([
      ["model", "plan", REASON_MODEL],
      ["model", "text", MODEL],
    ]);
    const planCall = t.llm.requests[0]!.body.toolConfig as Json;
    expect(planCall.toolChoice).toEqual({ tool: { name: "plan" } });
    expect(t.llm.requests[0]!.headers.authorization).toMatch(/\/bedrock\/aws4_request/);

    const { body } = await t.api(
      "GET",
      `/v1/tasks/${created.body.task_id}/branches/main/commits?limit=10`,
    );
    const calls = (body.commits as Json[]).flatMap((c) => c.llm_calls ?? []) as Json[];
    const price: Record<string, [number, number]> = {
      [REASON_MODEL]: [0.8, 4],
      [MODEL]: [0.06, 0.24],
    };
    for (const call of calls) {
      const [input, output] = price[call.model as string]!;
      expect(call.input_tokens).toBeGreaterThan(0);
      expect(call.cost_usd).toBeCloseTo(
        (call.input_tokens * input + call.output_tokens * output) / 1_000_000,
        12,
      );
    }
    expect(calls.map((c) => c.model).sort()).toEqual([REASON_MODEL, MODEL].sort());
    expect(task.usage.cost_usd).toBeCloseTo(
      calls.reduce((sum, c) => sum + c.cost_usd, 0),
      12,
    );
  });

  it("fails the task with what to do when the model is not enabled", async () => {
    t.llm.on("plan", {
      fault: "status",
      status: 403,
      message: "You don't have access to the model with the specified model ID.",
    });
    const created = await t.api("POST", "/v1/tasks", { goal: "Name a temple in Kyoto." });
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status).toBe("failed");
    expect(JSON.stringify(task)).toContain(
      "in the Bedrock console (Model access, region us-east-1)",
    );
  });
});

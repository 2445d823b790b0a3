// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
/**
 * OpenTelemetry traces against the whole local stack and an OTLP receiver on
 * loopback that decodes with OpenTelemetry's own protobuf definitions: one
 * task with a parallel group, LLM calls through a tool and a step retried
 * after a failed call forms one tree under its `invoke_workflow` root, named
 * and attributed per the GenAI conventions, sent with the operator's headers.
 */
import { taskTraceContext } from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReceivedSpan, spanTree, startOtlpReceiver } from "../support/otlp-receiver";
import { startTestStack, type TestStack } from "../support/stack";

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let t: TestStack;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  t = await startTestStack({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_HEADERS: "x-langfuse-ingestion-version=4,authorization=Basic%20cGs6c2s%3D",
      OTEL_SERVICE_NAME: "stackvm-test",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
      // One try per call: the scripted 500 fails its step, which is retried.
      LLM_MAX_ATTEMPTS: "1",
    },
  });
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

const gen = (seq: number, out: string, prompt: string) => ({
  seq_no: seq,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: [out] },
});

async function spansOf(traceId: string, until: (spans: ReceivedSpan[]) => boolean) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const mine = receiver.spans.filter((s) => s.traceId === traceId);
    if (until(mine)) return mine;
    if (Date.now() > deadline)
      throw new Error(`spans so far:\n${spanTree(receiver.spans, traceId)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("OpenTelemetry traces", () => {
  it("sends one tree per task: invoke_workflow, its steps, execute_tool and chat spans, a retried step", async () => {
    // The first call fails with a 500: its step fails and is tried again.
    t.llm.queue("text", { fault: "500", message: "scripted outage" });
    t.llm.on("text", (request) => {
      const text = String(request.messages.at(-1)?.content ?? "");
      return /A\./.test(text) ? "fact A" : /B\./.test(text) ? "fact B" : "combined";
    });
    const plan = [
      gen(0, "a", "Tell about A."),
      gen(1, "b", "Tell about B."),
      gen(2, "final_answer", "Combine ${a} and ${b}"),
    ];
    const created = await t.api("POST", "/v1/tasks", { plan, name: "otel demo" });
    expect(created.status).toBe(202);
    const taskId = created.body.task_id as string;
    expect((await t.waitForTask(taskId, { timeoutMs: 60_000 })).status).toBe("completed");
    const ids = taskTraceContext("local", taskId);
    const spans = await spansOf(ids.traceId, (s) =>
      s.some((x) => x.name.startsWith("invoke_workflow")),
    );
    const tree = spanTree(receiver.spans, ids.traceId);
    console.log(`span tree of ${taskId}:\n${tree}`);

    // One root, every other span under it: one tree.
    const root = spans.find((s) => s.name === "invoke_workflow otel demo")!;
    expect(root.spanId).toBe(ids.spanId);
    expect(root.parentSpanId).toBe("");
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const top = (s: ReceivedSpan): ReceivedSpan => {
      const parent = byId.get(s.parentSpanId);
      return parent ? top(parent) : s;
    };
    expect(spans.every((s) => top(s) === root)).toBe(true);
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_workflow",
      "langfuse.trace.name": "otel demo",
      "langfuse.session.id": taskId,
      "session.id": taskId,
      "langsmith.trace.name": "otel demo",
      "stackvm.status": "completed",
    });
    expect(root.service).toBe("stackvm-test");

    // Steps are the root's children: the plan commit, the group's members, the join, the last step.
    const steps = spans.filter((s) => s.name === "step");
    expect(steps.every((s) => s.parentSpanId === root.spanId)).toBe(true);
    expect(steps.length).toBeGreaterThanOrEqual(4);
    const failed = steps.filter((s) => s.attributes["stackvm.outcome"] === "failed");
    expect(failed.length).toBe(1);
    // Its retry is another step of the same member, a later attempt or message.
    const again = steps.filter(
      (s) =>
        s !== failed[0] &&
        s.attributes["stackvm.member"] === failed[0]!.attributes["stackvm.member"] &&
        s.attributes["stackvm.head"] === failed[0]!.attributes["stackvm.head"],
    );
    expect(again.length).toBeGreaterThanOrEqual(1);

    // Each LLM call: chat under execute_tool llm_generate under a step.
    const chats = spans.filter((s) => s.name === "chat scripted-model");
    expect(chats.length).toBe(4); // a, b, the failed try again, final
    for (const chat of chats) {
      const tool = byId.get(chat.parentSpanId)!;
      expect(tool.name).toBe("execute_tool llm_generate");
      expect(byId.get(tool.parentSpanId)!.name).toBe("step");
      expect(chat.kind).toBe(3); // CLIENT
    }
    const ok = chats.find((c) => c.status.code !== 2)!;
    expect(ok.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "scripted-model",
      "gen_ai.response.model": "scripted-model",
      "gen_ai.request.stream": expect.any(Boolean),
      "langfuse.observation.type": "generation",
      "langsmith.span.kind": "llm",
    });
    expect(ok.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    expect(ok.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    expect(String(ok.attributes["gen_ai.input.messages"])).toContain("Tell about");
    const failedChat = chats.filter((c) => c.status.code === 2);
    expect(failedChat.length).toBe(1);
    expect(failedChat[0]!.attributes["error.type"]).toBeDefined();
    const tools = spans.filter((s) => s.name === "execute_tool llm_generate");
    expect(tools[0]!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "llm_generate",
      "langfuse.observation.type": "tool",
    });
    // The group's members ran side by side: their steps overlap in time.
    const memberSteps = steps.filter((s) => s.attributes["stackvm.member"] !== undefined);
    expect(memberSteps.length).toBeGreaterThanOrEqual(2);

    // Over protobuf, with the operator's headers.
    expect(root.contentType).toContain("application/x-protobuf");
    expect(root.headers.authorization).toBe("Basic cGs6c2s=");
    expect(root.headers["x-langfuse-ingestion-version"]).toBe("4");
  });

  it("takes no trace context from a client: a traceparent, well-formed or not, neither joins nor breaks the task's trace", async () => {
    t.llm.on("text", "fine");
    const foreign = "4bf92f3577b34da6a3ce929d0e0e4736";
    const ids: string[] = [];
    for (const traceparent of [
      `00-${foreign}-00f067aa0ba902b7-01`,
      "00-zz-bad-01",
      `00-${"0".repeat(32)}-${"0".repeat(16)}-01`,
      "x".repeat(4000),
    ]) {
      const created = await t.api(
        "POST",
        "/v1/tasks",
        { plan: [gen(0, "final_answer", "Say fine.")] },
        { headers: { traceparent, tracestate: "evil=1" } },
      );
      expect(created.status, traceparent.slice(0, 40)).toBe(202);
      ids.push(created.body.task_id);
    }
    for (const taskId of ids) {
      // Each task runs to its end (no step dead-lettered on a bad trace) in its own trace.
      expect((await t.waitForTask(taskId, { timeoutMs: 60_000 })).status).toBe("completed");
      const own = taskTraceContext("local", taskId);
      await spansOf(own.traceId, (s) => s.some((x) => x.name.startsWith("invoke_workflow")));
    }
    expect(receiver.spans.filter((s) => s.traceId === foreign)).toEqual([]);
  });

  it("leaves content out unless the operator opts in", async () => {
    const { createOtelTracer } = await import("../../packages/functions/src/otel-sdk");
    const { lazyTracing } = await import("../../packages/functions/src/otel-front");
    const config = {
      url: `${receiver.url}/v1/traces`,
      headers: {},
      protocol: "http/json" as const,
      serviceName: "json-test",
      captureContent: false,
    };
    expect(typeof createOtelTracer).toBe("function");
    const tracing = lazyTracing(config);
    const llm = tracing.llm(
      {
        complete: async (r) => ({
          text: "secret answer",
          model: r.model,
          inputTokens: 3,
          outputTokens: 2,
        }),
      },
      "bedrock",
    );
    await llm.complete({
      model: "m1",
      messages: [{ role: "user", content: "secret prompt" }],
      timeoutMs: 1000,
    });
    await tracing.flush();
    const sent = receiver.spans.filter((s) => s.service === "json-test");
    expect(sent.map((s) => s.name)).toEqual(["chat m1"]);
    expect(sent[0]!.contentType).toContain("application/json");
    expect(sent[0]!.attributes["gen_ai.provider.name"]).toBe("aws.bedrock");
    expect(JSON.stringify(sent[0]!.attributes)).not.toContain("secret");
  });
});

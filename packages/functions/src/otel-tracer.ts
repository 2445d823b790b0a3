/**
 * Tracing where the operator set an OTLP endpoint (`otel-config.ts`): the
 * tracing port over the SDK (`otel-sdk.ts`), and the spans this layer adds
 * around core's ports: each LLM call (`chat {model}`, GenAI conventions), each
 * knowledge search (`retrieval {kb}`), and each task's root (`invoke_workflow`)
 * when it ends. `otel-front.ts` loads this file, and the SDK with it, on the
 * first span: without an endpoint neither is loaded.
 */
import {
  type KnowledgePort,
  type LlmPort,
  type LlmRequest,
  type SpanAttributes,
  type TaskEndHook,
  type Tracer,
  type TraceSpan,
  taskTraceContext,
} from "@stackvm/core";
import { sizingOf } from "./llm-sizing";
import type { OtelConfig } from "./otel-config";
import { createOtelTracer } from "./otel-sdk";

/** The tracing port, with what the functions add around it. */
export interface Tracing extends Tracer {
  /** Sends every span ended so far: before an invocation returns. */
  flush(): Promise<void>;
  /** The task's root span, when it ends (`WiringOptions.afterTerminal`). */
  taskEnded: TaskEndHook;
  llm(port: LlmPort, provider: string): LlmPort;
  knowledge(port: KnowledgePort): KnowledgePort;
}

/** Built by `otel-front.ts` on first use, with the SDK (this file is a chunk of its own). */
export function otelTracing(config: OtelConfig): Tracing {
  const sdk = createOtelTracer(config);
  const tracer = async () => sdk;
  const span: Tracer["span"] = (name, attributes, run, options) =>
    sdk.span(name, attributes, run, options);

  return {
    span,
    flush: () => sdk.flush(),
    async taskEnded(branch, task) {
      const ids = taskTraceContext(task.tenant_id, task.task_id);
      const title = task.title ?? task.goal ?? task.task_id;
      (await tracer()).root(
        `invoke_workflow ${title}`.slice(0, 200),
        ids,
        {
          "gen_ai.operation.name": "invoke_workflow",
          "gen_ai.workflow.name": title,
          "gen_ai.conversation.id": task.task_id,
          "stackvm.tenant": task.tenant_id,
          "stackvm.task_id": task.task_id,
          "stackvm.namespace": task.namespace,
          "stackvm.status": task.status,
          "stackvm.branch": branch.name,
          "session.id": task.task_id,
          "langfuse.trace.name": title,
          "langfuse.session.id": task.task_id,
          "langfuse.observation.type": "agent",
          "langsmith.trace.name": title,
          "langsmith.span.kind": "chain",
          "langsmith.metadata.session_id": task.task_id,
        },
        Date.parse(task.created_at),
        task.status === "completed" ? null : (task.error ?? task.status),
      );
    },
    llm(port, provider) {
      return {
        ...sizingOf(port),
        complete: (request) =>
          span(
            `chat ${request.model}`,
            requestAttributes(request, provider, config),
            async (s) => {
              const started = performance.now();
              let first: number | null = null;
              const traced: LlmRequest = request.onDelta
                ? {
                    ...request,
                    onDelta: (text) => {
                      first ??= performance.now();
                      request.onDelta!(text);
                    },
                  }
                : request;
              const response = await port.complete(traced);
              s.set({
                "gen_ai.response.model": response.model,
                "gen_ai.usage.input_tokens": response.inputTokens,
                "gen_ai.usage.output_tokens": response.outputTokens,
                "gen_ai.response.finish_reasons": response.finishReason
                  ? [response.finishReason]
                  : undefined,
                "gen_ai.response.time_to_first_chunk":
                  first === null ? undefined : (first - started) / 1000,
                "gen_ai.output.messages": config.captureContent
                  ? JSON.stringify([
                      {
                        role: "assistant",
                        parts: [{ type: "text", content: response.text }],
                        finish_reason: response.finishReason ?? "stop",
                      },
                    ])
                  : undefined,
              });
              return response;
            },
            { kind: "client" },
          ),
      };
    },
    knowledge(port) {
      const retrieval = <T>(
        kb: string | undefined,
        query: string,
        topK: number | undefined,
        run: (s: TraceSpan) => Promise<T>,
      ) =>
        span(
          `retrieval ${kb ?? "all"}`,
          {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": kb,
            "gen_ai.request.top_k": topK,
            "gen_ai.retrieval.query.text": config.captureContent ? query : undefined,
            "langfuse.observation.type": "retriever",
            "langsmith.span.kind": "retriever",
          },
          run,
        );
      return {
        chunks: (scope, query, topK) =>
          retrieval(scope.knowledgeBase, query, topK, async (s) => {
            const found = await port.chunks(scope, query, topK);
            s.set({ "stackvm.retrieval.chunks": found.chunks.length });
            return found;
          }),
        graph: (scope, query) =>
          retrieval(scope.knowledgeBase, query, undefined, () => port.graph(scope, query)),
        // knowledge_add's write: its tool span (execute_tool knowledge_add) already covers it.
        add: (scope, input) => port.add(scope, input),
        handle: (message, lastAttempt) => port.handle(message, lastAttempt),
      };
    },
  };
}

function requestAttributes(
  request: LlmRequest,
  provider: string,
  config: OtelConfig,
): SpanAttributes {
  return {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": provider === "bedrock" ? "aws.bedrock" : "openai",
    "gen_ai.request.model": request.model,
    "gen_ai.request.stream": request.onDelta !== undefined,
    "gen_ai.request.max_tokens": request.maxOutputTokens,
    "gen_ai.request.temperature": request.temperature,
    "gen_ai.output.type": request.jsonSchema || request.jsonObject ? "json" : "text",
    "gen_ai.input.messages": config.captureContent
      ? JSON.stringify(
          request.messages.map((m) => ({
            role: m.role,
            parts: [{ type: "text", content: m.content }],
          })),
        )
      : undefined,
    "langfuse.observation.type": "generation",
    "langsmith.span.kind": "llm",
  };
}

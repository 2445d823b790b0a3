/**
 * The tracing a function holds from its start where an OTLP endpoint is set: a
 * front whose every method loads `otel-tracer.ts` (with OpenTelemetry's SDK)
 * on first use, so the start itself loads neither (the worker's cold start,
 * docs/deploy.md). Without an endpoint this is not built at all.
 */
import { carryTraceContext, loadOnce } from "@stackvm/core";
import { sizingOf } from "./llm-sizing";
import type { OtelConfig } from "./otel-config";
import type { Tracing } from "./otel-tracer";

export type { Tracing } from "./otel-tracer";

export function lazyTracing(config: OtelConfig): Tracing {
  // Step messages now carry the task's trace (an optional field of the v1 message).
  carryTraceContext(true);
  const load = loadOnce(async () => (await import("./otel-tracer")).otelTracing(config));
  let loaded: Tracing | null = null;
  const tracing = async () => {
    loaded ??= await load();
    return loaded;
  };
  return {
    span: async (name, attributes, run, options) =>
      (await tracing()).span(name, attributes, run, options),
    async flush() {
      // Nothing traced in this process yet: nothing to load or send.
      if (loaded) await loaded.flush();
    },
    taskEnded: async (branch, task, branches) =>
      (await tracing()).taskEnded(branch, task, branches),
    llm: (port, provider) => ({
      ...sizingOf(port),
      complete: async (request) => (await tracing()).llm(port, provider).complete(request),
    }),
    knowledge: (port) => ({
      chunks: async (scope, query, topK) =>
        (await tracing()).knowledge(port).chunks(scope, query, topK),
      graph: async (scope, query) => (await tracing()).knowledge(port).graph(scope, query),
      add: (scope, input) => port.add(scope, input),
      handle: (message, lastAttempt) => port.handle(message, lastAttempt),
    }),
  };
}

/**
 * The tracing port over OpenTelemetry's JS SDK, loaded by `otel-tracer.ts` on
 * the first span of a process whose operator set an OTLP endpoint (never at a
 * function's start). Spans are batched and sent over OTLP/HTTP, protobuf or
 * JSON; `flush` sends what is left before an invocation returns. The span that
 * runs now is kept in an AsyncLocalStorage, so a tool's or an LLM call's span
 * is a child of its step's without the step passing it along.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Context,
  context as contexts,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter as HttpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  type IdGenerator,
  RandomIdGenerator,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { SpanAttributes, TraceSpan } from "@stackvm/core";
import type { OtelConfig } from "./otel-config";

const TRACEPARENT_PATTERN = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

/** Ids as asked: a task's root span has the ids its trace was derived with. */
class PresetIds implements IdGenerator {
  readonly #random = new RandomIdGenerator();
  next: { traceId: string; spanId: string } | null = null;
  generateTraceId(): string {
    return this.next?.traceId ?? this.#random.generateTraceId();
  }
  generateSpanId(): string {
    return this.next?.spanId ?? this.#random.generateSpanId();
  }
}

const clean = (attributes: SpanAttributes) =>
  Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined)) as Record<
    string,
    string | number | boolean | string[]
  >;

function parentContext(traceparent: string | undefined): Context {
  const match = traceparent ? TRACEPARENT_PATTERN.exec(traceparent) : null;
  if (!match) return contexts.active();
  return trace.setSpanContext(contexts.active(), {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: match[3] === "01" ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  });
}

export function createOtelTracer(config: OtelConfig) {
  const exporter =
    config.protocol === "http/json"
      ? new HttpJsonExporter({ url: config.url, headers: config.headers })
      : new ProtobufExporter({ url: config.url, headers: config.headers });
  const ids = new PresetIds();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": config.serviceName }),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000 })],
  });
  const tracer = provider.getTracer("stackvm");
  const running = new AsyncLocalStorage<Span>();
  const handle = (span: Span): TraceSpan => ({
    set: (attributes) => span.setAttributes(clean(attributes)),
    rename: (name) => span.updateName(name),
  });

  return {
    async span<T>(
      name: string,
      attributes: SpanAttributes,
      run: (span: TraceSpan) => Promise<T>,
      options: { parent?: string; kind?: "internal" | "client" } = {},
    ): Promise<T> {
      const current = running.getStore();
      const parent = current
        ? trace.setSpan(contexts.active(), current)
        : parentContext(options.parent);
      const span = tracer.startSpan(
        name,
        {
          kind: options.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
          attributes: clean(attributes),
        },
        parent,
      );
      try {
        const result = await running.run(span, () => run(handle(span)));
        span.setStatus({ code: SpanStatusCode.OK });
        return result;
      } catch (error) {
        const err = error as { name?: string; code?: string; message?: string };
        span.setAttribute("error.type", err.code ?? err.name ?? "Error");
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(err.message ?? error) });
        throw error;
      } finally {
        span.end();
      }
    },
    /** A span with the given ids and times, ended at once: a task's root (`invoke_workflow`). */
    root(
      name: string,
      preset: { traceId: string; spanId: string },
      attributes: SpanAttributes,
      startMs: number,
      failed: string | null,
    ): void {
      ids.next = preset;
      const span = tracer.startSpan(
        name,
        { kind: SpanKind.INTERNAL, attributes: clean(attributes), startTime: startMs, root: true },
        contexts.active(),
      );
      ids.next = null;
      span.setStatus(
        failed ? { code: SpanStatusCode.ERROR, message: failed } : { code: SpanStatusCode.OK },
      );
      span.end();
    },
    flush: () => provider.forceFlush(),
  };
}

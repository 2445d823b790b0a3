/**
 * The tracing port: spans around what a step does (the step, each tool call),
 * for an exporter outside core (OpenTelemetry's SDK in `packages/functions`,
 * loaded only where an OTLP endpoint is set). Core names the spans and their
 * attributes; the adapter decides their parents (the span running when one
 * starts) and where they go. Without an adapter nothing is traced and nothing
 * is paid.
 *
 * One trace per task: its id and its root span's id are derived from the
 * tenant and the task (`taskTraceContext`), so every invocation of every
 * branch, on any function, continues the same trace; each step message
 * carries it (`trace` in `vm/message.ts`).
 */
import { createHash } from "node:crypto";

/** Attribute values as OpenTelemetry takes them; undefined ones are left out. */
export type SpanAttributes = Record<string, string | number | boolean | string[] | undefined>;

/** The span a traced call runs in. */
export interface TraceSpan {
  set(attributes: SpanAttributes): void;
  rename(name: string): void;
}

export interface Tracer {
  /**
   * Runs `run` in a span: a child of the span running now, else of `parent`
   * (a W3C `traceparent`). A throw marks the span failed and is rethrown.
   */
  span<T>(
    name: string,
    attributes: SpanAttributes,
    run: (span: TraceSpan) => Promise<T>,
    options?: { parent?: string; kind?: "internal" | "client" },
  ): Promise<T>;
  /** Sends the spans ended so far; the worker calls it before an invocation returns. */
  flush?(): Promise<void>;
}

/** A W3C `traceparent`: version, trace id, parent span id, flags. */
export const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;

/**
 * The trace of a task: its trace id and the id of its root span
 * (`invoke_workflow`), the same wherever they are computed.
 *
 * @example
 * taskTraceContext("acme", "tsk_1").traceparent // "00-…-…-01"
 */
export function taskTraceContext(
  tenant: string,
  taskId: string,
): { traceId: string; spanId: string; traceparent: string } {
  const hex = createHash("sha256").update(`stackvm-trace\0${tenant}\0${taskId}`).digest("hex");
  const traceId = hex.slice(0, 32);
  const spanId = hex.slice(32, 48);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/**
 * Where the functions send OpenTelemetry traces, and how long finished tasks
 * are kept (docs/observability.md): the operator's OTEL_* and
 * STACKVM_RETENTION_DAYS variables as they are when deploying, given to the
 * API and the worker (the worker writes the expiry when a task ends). Unset
 * ones are left out: no endpoint, no tracing (and the SDK is never loaded).
 */
const NAMES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  "OTEL_SERVICE_NAME",
  "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
  "STACKVM_RETENTION_DAYS",
] as const;

export const observabilityEnvironment: Record<string, string> = Object.fromEntries(
  NAMES.flatMap((name) => {
    const value = process.env[name]?.trim();
    return value ? [[name, value]] : [];
  }),
);

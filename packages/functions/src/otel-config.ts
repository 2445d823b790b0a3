/**
 * Where traces go, from OpenTelemetry's own variables (docs/observability.md):
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the whole URL) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` is added), their `_HEADERS`
 * (`key=value,key2=value2`, values URL-encoded), their `_PROTOCOL`
 * (`http/protobuf`, the default, or `http/json`), `OTEL_SERVICE_NAME`, and
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` to put prompts and
 * answers in the spans. No endpoint: no tracing, and the SDK is never loaded.
 */
/** A bad OpenTelemetry setting; `loadConfig` reports it as a `ConfigError`. */
class BadSetting extends Error {}

export interface OtelConfig {
  url: string;
  headers: Record<string, string>;
  protocol: "http/protobuf" | "http/json";
  serviceName: string;
  /** Prompts, answers and tool arguments in the spans (off unless the operator opts in). */
  captureContent: boolean;
}

/** The settings, or null with no endpoint; throws an `Error` naming a bad one. */
export function otelConfig(env: Record<string, string | undefined>): OtelConfig | null {
  const whole = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!whole && !base) return null;
  const url = whole || `${base!.replace(/\/+$/, "")}/v1/traces`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BadSetting(`OTEL_EXPORTER_OTLP_ENDPOINT is not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new BadSetting(
      `OTEL_EXPORTER_OTLP_ENDPOINT must be http:// or https://, got ${parsed.protocol}`,
    );
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
    env.OTEL_EXPORTER_OTLP_PROTOCOL ??
    "http/protobuf"
  ).trim();
  if (protocol !== "http/protobuf" && protocol !== "http/json")
    throw new BadSetting(
      `OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (gRPC is not supported), got ${JSON.stringify(protocol)}`,
    );
  return {
    url,
    headers: {
      ...headersOf(env.OTEL_EXPORTER_OTLP_HEADERS, "OTEL_EXPORTER_OTLP_HEADERS"),
      ...headersOf(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
    },
    protocol,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || "stackvm",
    captureContent:
      env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true",
  };
}

function headersOf(text: string | undefined, name: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    if (!pair.trim()) continue;
    const at = pair.indexOf("=");
    if (at <= 0) throw new BadSetting(`${name}: '${pair.trim()}' is not key=value`);
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(
        pair.slice(at + 1).trim(),
      );
    } catch {
      throw new BadSetting(`${name}: '${pair.trim()}' is not URL-encoded`);
    }
  }
  return headers;
}

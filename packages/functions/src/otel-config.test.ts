import { describe, expect, it } from "vitest";
import { loadConfig } from "./config";
import { otelConfig } from "./otel-config";

describe("otelConfig", () => {
  it("answers null without an endpoint: nothing is traced", () => {
    expect(otelConfig({})).toBeNull();
  });

  it("reads OpenTelemetry's variables: the traces URL, URL-encoded headers, the protocol", () => {
    expect(
      otelConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://cloud.langfuse.com/api/public/otel/",
        OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic%20cGs6c2s%3D, x-a = b",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-a=c",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      }),
    ).toEqual({
      url: "https://cloud.langfuse.com/api/public/otel/v1/traces",
      headers: { Authorization: "Basic cGs6c2s=", "x-a": "c" },
      protocol: "http/json",
      serviceName: "stackvm",
      captureContent: false,
    });
    expect(
      otelConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://jaeger:4318/v1/traces" })?.url,
    ).toBe("http://jaeger:4318/v1/traces");
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }, "is not a URL"],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "file:///etc/passwd" }, "must be http:// or https://"],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      "gRPC is not supported",
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_HEADERS: "novalue" },
      "is not key=value",
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_HEADERS: "a=%E0%A4%A" },
      "is not URL-encoded",
    ],
  ])("refuses %j at start, naming what is wrong", (env, message) => {
    expect(() =>
      loadConfig({
        AWS_REGION: "us-east-1",
        STACKVM_TABLE: "t",
        STACKVM_QUEUE_URL: "memory://steps",
        STACKVM_DLQ_URL: "memory://steps-dlq",
        STACKVM_BUCKET: "b",
        ...env,
      }),
    ).toThrow(message);
  });
});

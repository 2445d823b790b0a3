/**
 * An OTLP/HTTP trace receiver on loopback for tests: it decodes what it is
 * sent with OpenTelemetry's own protobuf definitions (the generated
 * `opentelemetry-proto` messages `@opentelemetry/otlp-transformer` shipped,
 * installed as `otlp-protos`), or reads OTLP's JSON, and keeps every span with
 * the headers it came with.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";

const require = createRequire(import.meta.url);
const { opentelemetry } = require("otlp-protos/build/src/generated/root.js") as any;
const Request = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: { code: number; message?: string };
  attributes: Record<string, unknown>;
  startMs: number;
  endMs: number;
  service: string;
  contentType: string;
  headers: IncomingHttpHeaders;
}

const hex = (bytes: Uint8Array | string | undefined) =>
  typeof bytes === "string" ? bytes : Buffer.from(bytes ?? []).toString("hex");

function anyValue(v: any): unknown {
  if (v == null) return null;
  if (v.stringValue != null) return v.stringValue;
  if (v.boolValue != null) return v.boolValue;
  if (v.intValue != null) return Number(v.intValue);
  if (v.doubleValue != null) return v.doubleValue;
  if (v.arrayValue != null) return (v.arrayValue.values ?? []).map(anyValue);
  return null;
}

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const body = Buffer.concat(parts);
      const type = String(req.headers["content-type"] ?? "");
      let decoded: any;
      try {
        decoded = type.includes("json") ? JSON.parse(body.toString("utf8")) : Request.decode(body);
      } catch (error) {
        res.writeHead(400).end(String(error));
        return;
      }
      for (const rs of decoded.resourceSpans ?? []) {
        const service = anyValue(
          (rs.resource?.attributes ?? []).find((a: { key: string }) => a.key === "service.name")
            ?.value,
        );
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              name: s.name,
              kind: Number(s.kind),
              status: { code: Number(s.status?.code ?? 0), message: s.status?.message },
              attributes: Object.fromEntries(
                (s.attributes ?? []).map((a: { key: string; value: unknown }) => [
                  a.key,
                  anyValue(a.value),
                ]),
              ),
              startMs: Number(BigInt(String(s.startTimeUnixNano)) / 1_000_000n),
              endMs: Number(BigInt(String(s.endTimeUnixNano)) / 1_000_000n),
              service: String(service),
              contentType: type,
              headers: req.headers,
            });
          }
        }
      }
      const json = type.includes("json");
      res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
      res.end(json ? "{}" : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The spans of one trace as an indented tree of names, children by start time. */
export function spanTree(spans: ReceivedSpan[], traceId: string): string {
  const mine = spans.filter((s) => s.traceId === traceId);
  const ids = new Set(mine.map((s) => s.spanId));
  const lines: string[] = [];
  const walk = (parent: string, depth: number) => {
    for (const s of mine
      .filter((c) => (parent === "" ? !ids.has(c.parentSpanId) : c.parentSpanId === parent))
      .sort((a, b) => a.startMs - b.startMs || a.name.localeCompare(b.name))) {
      const facts = [
        "stackvm.member",
        "stackvm.outcome",
        "stackvm.attempt",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
      ]
        .filter((k) => s.attributes[k] !== undefined)
        .map((k) => `${k.split(".").at(-1)}=${s.attributes[k]}`);
      lines.push(
        `${"  ".repeat(depth)}${s.name}${s.status.code === 2 ? " [error]" : ""}${facts.length ? `  (${facts.join(", ")})` : ""}`,
      );
      walk(s.spanId, depth + 1);
    }
  };
  walk("", 0);
  return lines.join("\n");
}

/**
 * LLM traces: the whole request and answer of one LLM call, stored as a blob
 * beside the task and referenced from the call's record in its commit
 * (`LlmCall.trace`, the blob's SHA-256). Secrets are redacted before anything is
 * written. Traces live under their own prefix, `llm/{tenant}/{task}`, so that
 * one S3 lifecycle rule (or the local sweep) expires them after the retention,
 * and deleting the task deletes them.
 */
import type { LlmPurpose } from "../model";
import type { Blobs } from "../ports/blobs";
import type { LlmMessage, LlmRequest, LlmResponse } from "../ports/llm";

/** Where traces are kept unless `STACKVM_LLM_TRACE_RETENTION_DAYS` says otherwise. */
export const DEFAULT_TRACE_RETENTION_DAYS = 30;

/** The key prefix under which every trace lives: the S3 lifecycle rule's filter. */
export const LLM_TRACE_ROOT = "llm";

/** The blob prefix of a task's traces. */
export const llmTracePrefix = (tenant: string, taskId: string): string =>
  `${LLM_TRACE_ROOT}/${tenant}/${taskId}`;

/** One try of a call against the server: a failed one says why. */
export interface TraceAttempt {
  attempt: number;
  latency_ms: number;
  /** Absent on the try that answered. */
  error?: string;
}

/** What a trace blob holds (version 1). */
export interface LlmTrace {
  v: 1;
  purpose: LlmPurpose;
  model: string;
  created_at: string;
  request: {
    model: string;
    messages: LlmMessage[];
    response_format?: Record<string, unknown>;
    temperature?: number;
    max_tokens?: number;
  };
  response: {
    text: string;
    /** The answer parsed as JSON, when the call asked for JSON and the text parsed. */
    json?: unknown;
    finish_reason: string | null;
    reasoning?: string;
  };
  /** 0 for the first answer; each later round sent the previous answer back with its errors. */
  repair_round: number;
  /** Why this answer was sent back for repair (absent when it was accepted). */
  rejected?: string[];
  attempts: TraceAttempt[];
}

/** Where a session writes its traces; none: it keeps no traces. */
export interface TraceSink {
  blobs: Blobs;
  /** `llmTracePrefix(tenant, task)`. */
  prefix: string;
  /** Values never to store (API keys of the deployment); bearer tokens and key shapes are redacted anyway. */
  secrets?: readonly string[];
}

/** What the session knows of one finished call. */
export interface TraceInput {
  purpose: LlmPurpose;
  request: Omit<LlmRequest, "timeoutMs">;
  response: LlmResponse;
  createdAt: string;
  repairRound: number;
  attempts: TraceAttempt[];
  json?: { ok: true; value: unknown } | { ok: false; errors: string[] };
}

/** The trace of one call, as it will be stored (before redaction). */
export function buildTrace(input: TraceInput): LlmTrace {
  const { request, response, json } = input;
  return {
    v: 1,
    purpose: input.purpose,
    model: response.model || request.model,
    created_at: input.createdAt,
    request: {
      model: request.model,
      messages: request.messages,
      ...(request.jsonSchema
        ? {
            response_format: {
              type: "json_schema",
              json_schema: { name: request.jsonSchema.name, schema: request.jsonSchema.schema },
            },
          }
        : request.jsonObject
          ? { response_format: { type: "json_object" } }
          : {}),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(request.maxOutputTokens === undefined ? {} : { max_tokens: request.maxOutputTokens }),
    },
    response: {
      text: response.text,
      ...(json?.ok ? { json: json.value } : {}),
      finish_reason: response.finishReason ?? null,
      ...(response.reasoning === undefined ? {} : { reasoning: response.reasoning }),
    },
    repair_round: input.repairRound,
    ...(json && !json.ok ? { rejected: json.errors } : {}),
    attempts: input.attempts,
  };
}

/** Writes the trace, redacted, as one blob; answers its SHA-256 for the call's record. */
export async function storeTrace(sink: TraceSink, trace: LlmTrace): Promise<string> {
  const redacted = redactSecrets(trace, sink.secrets ?? []);
  const bytes = new TextEncoder().encode(JSON.stringify(redacted));
  const ref = await sink.blobs.put(sink.prefix, bytes, "application/json");
  return ref.sha256;
}

/** What a redacted secret becomes. */
export const REDACTED = "[redacted]";

/** Shapes of secrets, redacted wherever they appear. */
const SECRET_SHAPES: RegExp[] = [
  // `Authorization: Bearer x`, `Bearer x`, `Basic x` (the scheme is kept); a token has
  // a digit or a symbol, so that "Basic information" stays as it is.
  /\b(Bearer|Basic)\s+(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/g,
  // OpenAI-style and other `sk-` keys, this product's API keys.
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bsvm_[a-z0-9-]{1,40}_[a-z0-9]{40}\b/g,
  // Webhook signing secrets (Standard Webhooks' `whsec_`).
  /\bwhsec_[A-Za-z0-9+/=_-]{16,}/g,
  // GitHub and Slack tokens.
  /\b(?:ghp|gho|ghs|ghu|github_pat)_[A-Za-z0-9_]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  // AWS access key ids.
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g,
];

/** Header or field names whose value is a secret (`"api_key": "..."`, `X-Api-Key: ...`). */
const SECRET_FIELD =
  /((?:authorization|api[_-]?key|x-api-key|access[_-]?token|secret|password)["']?\s*[:=]\s*["']?)([^\s"',;}]{4,})/gi;

/**
 * Every string in the value with secrets replaced by `[redacted]`: the known
 * values given, anything shaped like a bearer token or an API key, and the value
 * of fields named like a secret. Keys of objects are kept as they are.
 *
 * @example
 * redactSecrets({ h: "Authorization: Bearer abcdefgh12345" }, [])
 * // { h: "Authorization: Bearer [redacted]" }
 */
export function redactSecrets<T>(value: T, known: readonly string[]): T {
  // Longest first, so that a secret containing another is replaced whole.
  const secrets = known.filter((s) => s.length >= 6).sort((a, b) => b.length - a.length);
  const redactText = (text: string): string => {
    let out = text;
    for (const secret of secrets) out = out.split(secret).join(REDACTED);
    for (const shape of SECRET_SHAPES) {
      out = out.replace(shape, (_match, scheme?: string) =>
        typeof scheme === "string" && /^(Bearer|Basic)$/.test(scheme)
          ? `${scheme} ${REDACTED}`
          : REDACTED,
      );
    }
    return out.replace(SECRET_FIELD, (match, name: string, secret: string) =>
      /^(Bearer|Basic|\[redacted\])$/i.test(secret) ? match : `${name}${REDACTED}`,
    );
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactText(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/** True when a trace made at `createdAt` is past the retention at `now`. */
export function traceExpired(createdAt: string, now: number, retentionDays: number): boolean {
  return Date.parse(createdAt) + retentionDays * 86_400_000 <= now;
}

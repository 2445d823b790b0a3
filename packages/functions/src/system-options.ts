/**
 * The system's options: what configuration gives the wiring (system.ts), the
 * same on AWS (aws-system.ts) and on the local stack. The options core's
 * wiring reads are its `WiringOptions`; this file reads them from the
 * configuration the environment gave.
 */
import type { Log, WiringOptions } from "@stackvm/core";
import type { RuntimeConfig } from "./config";
import type { KnowledgeOptions } from "./knowledge";
import { lazyTracing, type Tracing } from "./otel-front";

/** Core's wiring options, and what only the functions' own wiring reads (the API's and knowledge's). */
export interface SystemOptions extends WiringOptions {
  localMode: boolean;
  adminKey: string | null;
  maxBodyBytes: number;
  /** Requests per second from one source address to the routes without a key (default 50). */
  anonymousRequestsPerSecond?: number;
  /** How long an MCP tool call waits for its task, in seconds (default 50). */
  mcpWaitSeconds?: number;
  /** Origins whose pages may call the API (`STACKVM_CORS_ORIGINS`). */
  corsOrigins?: readonly string[];
  /** `EMBEDDING_MODEL` and the upload limit of knowledge documents. */
  knowledge?: KnowledgeOptions;
  /** OpenTelemetry traces, where an OTLP endpoint is set (`otel-tracer.ts`). */
  tracing?: Tracing;
  /** `LLM_PROVIDER`, for the LLM spans' `gen_ai.provider.name`. */
  llmProvider?: string;
}

/** The system's options as configuration gives them, the same on AWS and locally. */
export function systemOptions(config: RuntimeConfig, log: Log, localMode: boolean): SystemOptions {
  return {
    llm: config.llm,
    log,
    localMode,
    outbound: { openRanges: config.openRanges, ownPorts: new Set(config.ownPorts) },
    adminKey: config.adminKey,
    publicUrl: config.publicUrl,
    maxPlanUpdates: config.maxPlanUpdates,
    planRepairs: config.planRepairs,
    llmUnreachableMs: config.llmUnreachableSeconds * 1000,
    maxBodyBytes: config.maxBodyBytes,
    anonymousRequestsPerSecond: config.anonymousRequestsPerSecond,
    mcpWaitSeconds: config.mcpWaitSeconds,
    corsOrigins: config.corsOrigins,
    llmTraces: {
      retentionDays: config.llmTraceRetentionDays,
      secrets: [config.openai.apiKey, config.adminKey, config.web.search.apiKey].filter(
        (s): s is string => s !== null,
      ),
    },
    quotas: config.quotas,
    webhooks: config.webhooks,
    knowledge: config.knowledge,
    ...tracingOptions(config),
    web: config.web,
    // One upload limit for knowledge documents and files (STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES).
    files: { maxUploadBytes: config.knowledge.maxUploadBytes },
  };
}

/** The tracing and its task-end hook, where an OTLP endpoint is set. */
function tracingOptions(config: RuntimeConfig): Partial<SystemOptions> {
  if (!config.otel) return {};
  const tracing = lazyTracing(config.otel);
  return { tracing, llmProvider: config.providers.llm, afterTerminal: [tracing.taskEnded] };
}

/**
 * The system's options (what configuration gives the wiring), apart from the
 * wiring itself so that a function that builds only the step system
 * (step-system.ts) does not import the whole one. The options core's wiring
 * reads are its `WiringOptions`; this file reads them from the environment.
 */
import type { Log, WiringOptions } from "@stackvm/core";
import type { RuntimeConfig } from "./config";
import type { KnowledgeOptions } from "./knowledge";

/** Core's wiring options, and what only the functions' own wiring reads (the API's and knowledge's). */
export interface SystemOptions extends WiringOptions {
  localMode: boolean;
  adminKey: string | null;
  maxBodyBytes: number;
  /** Requests per second from one source address to the routes without a key (default 50). */
  anonymousRequestsPerSecond?: number;
  /** `EMBEDDING_MODEL` and the upload limit of knowledge documents. */
  knowledge?: KnowledgeOptions;
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
    llmTraces: {
      retentionDays: config.llmTraceRetentionDays,
      secrets: [config.openai.apiKey, config.adminKey].filter((s): s is string => s !== null),
    },
    quotas: config.quotas,
    webhooks: config.webhooks,
    knowledge: config.knowledge,
    // One upload limit for knowledge documents and files (STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES).
    files: { maxUploadBytes: config.knowledge.maxUploadBytes },
  };
}

/**
 * The system's options (what configuration gives the wiring), apart from the
 * wiring itself so that a function that builds only the step system
 * (step-system.ts) does not import the whole one.
 */
import type {
  LlmConfig,
  Log,
  OutboundPolicy,
  Resolver,
  TenantQuotas,
  TerminalHook,
} from "@stackvm/core";
import type { RuntimeConfig } from "./config";
import type { KnowledgeOptions } from "./knowledge";

export interface SystemOptions {
  llm: LlmConfig;
  log: Log;
  localMode: boolean;
  /**
   * What outgoing requests (tools, MCP servers, webhooks) may reach. `ownPorts`
   * is live: the local stack adds its listeners' ports as they start.
   */
  outbound: OutboundPolicy;
  adminKey: string | null;
  publicUrl: string | null;
  /** The public origin when only known after start (the local stack's port); else `publicUrl`. */
  resolvePublicUrl?: () => string | null;
  maxPlanUpdates: number;
  planRepairs: number;
  /** How long an LLM that cannot be reached is retried before its task fails. */
  llmUnreachableMs?: number;
  /** Whether an LLM is configured; false: a goal (which needs a planner) is refused at once. Unknown (undefined): assumed. */
  llmConfigured?: boolean;
  maxBodyBytes: number;
  /** Requests per second from one source address to the routes without a key (default 50). */
  anonymousRequestsPerSecond?: number;
  /** Each LLM call's prompt and answer: days kept (0: none), and values to redact from them. */
  llmTraces?: { retentionDays: number; secrets: string[] };
  /** Extra work when a task ended on a branch, before the outgoing webhooks and quotas. */
  afterTerminal?: TerminalHook[];
  /** `EMBEDDING_MODEL` and the upload limit of knowledge documents. */
  knowledge?: KnowledgeOptions;
  /** Quota defaults; each tenant's overrides live in the store. */
  quotas?: Partial<TenantQuotas>;
  /** Outgoing webhooks: attempts (at most the queue's maxReceiveCount), first backoff, receiver timeout. */
  webhooks?: {
    maxAttempts?: number;
    backoffBaseSeconds?: number;
    timeoutMs?: number;
    /** For tests: name resolution that stays on this machine. */
    resolve?: Resolver;
  };
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
  };
}

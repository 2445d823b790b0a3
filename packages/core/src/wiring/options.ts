/**
 * What the wiring of the services is given besides the ports: the options the
 * real system reads from its configuration (`functions/src/system-options.ts`
 * reads the environment into them) and the test systems set by hand. One type,
 * so that every system wires its services from the same choices.
 */

import type { KnowledgeAddPort, KnowledgeSearchPort } from "../knowledge/knowledge-port";
import type { LlmConfig } from "../llm/config";
import type { OutboundPolicy } from "../net/outbound-policy";
import type { Resolver } from "../net/resolver";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { ItemStore } from "../ports/item-store";
import type { LlmPort } from "../ports/llm";
import type { Log } from "../ports/log";
import type { Queue } from "../ports/queue";
import type { SandboxPort } from "../ports/sandbox";
import type { SchedulerPort } from "../ports/scheduler";
import type { SecretBox } from "../ports/secrets";
import type { DocumentUploads } from "../ports/uploads";
import type { WakePort } from "../ports/wake";
import type { TaskEndHook } from "../service/lifecycle";
import type { TenantQuotas } from "../service/quotas";
import type { McpClient } from "../tools/sources/mcp-shapes";
import type { WebToolsConfig } from "../tools/web";
import type { TerminalHook } from "../vm/step-deps";

/** The ports the services are wired over. */
export interface WiringPorts {
  items: ItemStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  sandbox: SandboxPort;
  llm: LlmPort;
  /** Where `vector_search` and `retrieve_knowledge_graph` search and `knowledge_add` writes; none: those tools are not built in. */
  knowledge?: KnowledgeSearchPort & KnowledgeAddPort;
  /** Timers of the tenants' schedules; none: schedules cannot be created (`noScheduler`). */
  scheduler?: SchedulerPort;
  /** Wakes of waiting branches past the queue's 15-minute delay; none: the queue's wake hides itself again until due. */
  wakes?: WakePort;
  /** Seals the secret headers of MCP servers at rest; none: secret headers are refused with a reason (`noSecrets`). */
  secrets?: SecretBox;
  /** The MCP client; none: MCP servers cannot be added (`noMcp`). */
  mcp?: McpClient;
  /** Presigned uploads of large documents and files straight to S3; none: refused with a reason. */
  uploads?: DocumentUploads;
}

/** Outgoing webhooks: attempts (at most the queue's maxReceiveCount), first backoff, receiver timeout. */
export interface WebhookOptions {
  maxAttempts?: number;
  backoffBaseSeconds?: number;
  timeoutMs?: number;
  /** For tests: name resolution that stays on this machine. */
  resolve?: Resolver;
  /**
   * For tests: the check of a webhook URL, at the door and at delivery, in place
   * of the outbound policy's (which resolves the URL's host name at the door).
   */
  checkUrl?: (url: string) => void;
}

/** The choices the services are wired with (see the module's comment). */
export interface WiringOptions {
  /** Files (`POST /v1/files`): the largest multipart upload (default 5 MiB) and presigned file (default 64 MiB). */
  files?: { maxUploadBytes: number; maxFileBytes?: number };
  llm: LlmConfig;
  log: Log;
  /**
   * What outgoing requests (tools, MCP servers, webhooks) may reach. `ownPorts`
   * is live: the local stack adds its listeners' ports as they start.
   */
  outbound: OutboundPolicy;
  publicUrl: string | null;
  /** The public origin when only known after start (the local stack's port); else `publicUrl`. */
  resolvePublicUrl?: () => string | null;
  maxPlanUpdates: number;
  planRepairs: number;
  /** How long an LLM that cannot be reached is retried before its task fails. */
  llmUnreachableMs?: number;
  /** Whether an LLM is configured; false: a goal (which needs a planner) is refused at once. Unknown (undefined): assumed. */
  llmConfigured?: boolean;
  /** For tests: the LLM session's wait between attempts (none: it waits the backoff). */
  llmSleep?: (ms: number) => Promise<void>;
  /**
   * For tests: false leaves the LLM call in flight unwritten on the branch
   * (`vm/in-flight.ts`), so that a step writes its branch only at its head move.
   */
  watchCalls?: boolean;
  /** Each LLM call's prompt and answer: days kept (0: none), and values to redact from them. */
  llmTraces?: { retentionDays: number; secrets: string[] };
  /** Extra work when a task ended on a branch, before the outgoing webhooks and quotas. */
  afterTerminal?: Array<TerminalHook | TaskEndHook>;
  /** Quota defaults; each tenant's overrides live in the store. */
  quotas?: Partial<TenantQuotas>;
  webhooks?: WebhookOptions;
  /** `web_search`'s provider (its key, price, base URL) and `web_fetch`'s bounds; none: no provider. */
  web?: WebToolsConfig;
}

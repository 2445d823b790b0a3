/**
 * Builds the whole system from its ports: the services the API calls, the
 * schedules and knowledge, and what steps use (step-system.ts, which the worker
 * builds alone). The Lambda entry files and the local stack
 * both call this, so the same wiring runs on AWS and on a laptop.
 */
import type { ApiDeps } from "@stackvm/api";
import {
  ApiKeyService,
  type Blobs,
  type Clock,
  DEFAULT_EMBEDDING_MODEL,
  DEFAULT_TRACE_RETENTION_DAYS,
  type DocumentUploads,
  type EmbeddingPort,
  type ItemStore,
  type KnowledgeIndex,
  type KnowledgePort,
  type LlmPort,
  LlmTraceService,
  type McpClient,
  type Queue,
  RetryService,
  type SandboxPort,
  type SchedulerPort,
  ScheduleService,
  type SecretBox,
  StackVMError,
  StreamLeases,
  TaskEvents,
  TriggerService,
  type WakePort,
} from "@stackvm/core";
import { createKnowledge, knowledgePortOf } from "./knowledge";
import { createStepSystem } from "./step-system";
import type { SystemOptions } from "./system-options";

export interface SystemPorts {
  items: ItemStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  sandbox: SandboxPort;
  llm: LlmPort;
  /** Timers of the tenants' schedules (EventBridge Scheduler on AWS, a timer locally); none: schedules cannot be created. */
  scheduler?: SchedulerPort;
  /** Wakes of waiting branches past the queue's 15-minute delay (one-time schedules); none: the queue's wake hides itself again until due. */
  wakes?: WakePort;
  /** The knowledge index (LanceDB on S3 or the S3 emulator); only the knowledge function (and the local stack) gets one. */
  knowledgeIndex?: KnowledgeIndex;
  /** Embeddings for knowledge; only the knowledge function (and the local stack) gets them. */
  embeddings?: EmbeddingPort;
  /**
   * Where searches and ingest messages go: the knowledge function (the worker on
   * AWS), or the protocol in process (the local stack); none: this process's own
   * services answer, with `knowledgeIndex` and `embeddings`.
   */
  knowledge?: KnowledgePort;
  /** Presigned uploads of large documents straight to S3; none: refused with a reason. */
  uploads?: DocumentUploads;
  /** Seals the secret headers of MCP servers at rest; none: secret headers are refused with a reason. */
  secrets?: SecretBox;
  /** The MCP client (the official SDK over the address guard); none: MCP servers cannot be added. */
  mcp?: McpClient;
}

export type { SystemOptions } from "./system-options";
export { systemOptions } from "./system-options";

export type System = ReturnType<typeof createSystem>;

/** The scheduler port where none is configured: schedules answer why. */
const noScheduler: SchedulerPort = {
  async put() {
    throw new StackVMError(
      "forbidden",
      "schedules_unavailable",
      "schedules are not configured here: set STACKVM_SCHEDULE_GROUP, STACKVM_SCHEDULER_ROLE_ARN and STACKVM_SCHEDULER_FUNCTION_ARN (infra/schedules.ts does)",
    );
  },
  async delete() {},
};

/** A port a function was not given: any call says so (a wiring bug, not a user error). */
function notInThisFunction<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_target, method) => async () => {
      throw new StackVMError(
        "internal",
        "not_in_this_function",
        `${what}.${String(method)} was called in a function that is not given the ${what} (only the worker is)`,
      );
    },
  });
}

export function createSystem(ports: SystemPorts, options: SystemOptions) {
  // Every function knows the knowledge tools (the API validates plans that call
  // them); only the knowledge function is given the index and embeddings that
  // run them, and the worker reaches it through the knowledge port.
  const knowledge = createKnowledge(
    {
      ...ports,
      index: ports.knowledgeIndex ?? notInThisFunction("knowledge index"),
      embeddings: ports.embeddings ?? notInThisFunction("embeddings"),
    },
    options.llm,
    options.knowledge ?? { embeddingModel: DEFAULT_EMBEDDING_MODEL, maxUploadBytes: 5 << 20 },
    options.log,
    // Ingest spends from the tenant's month like tasks do (the quotas are built below).
    {
      left: (tenant) => core.quotas.budgetLeft(tenant),
      record: (tenant, usage) => core.quotas.addToMonth(tenant, usage),
    },
  );
  // What steps use: the same wiring the worker builds alone.
  const core = createStepSystem(
    { ...ports, knowledge: ports.knowledge ?? knowledgePortOf(knowledge) },
    options,
  );
  const { store, namespaces, presenter, tasks, branches, templates, waits, tokens } = core;
  const keys = new ApiKeyService(core.stores.apiKeys, ports.clock);
  const retries = new RetryService({
    store,
    queue: ports.queue,
    clock: ports.clock,
    presenter,
    branches,
    tasks: tasks.reads,
    checks: tasks.checks,
    admission: tasks.admission,
  });
  const events = new TaskEvents({
    store,
    tasks: tasks.reads,
    presenter,
    clock: ports.clock,
    tokens,
  });
  const streams = new StreamLeases({
    leases: core.stores.streamLeases,
    clock: ports.clock,
    limit: async (tenant) => (await core.quotas.limits(tenant)).max_open_streams,
    log: options.log,
  });
  const triggers = new TriggerService({
    triggers: core.stores.triggers,
    clock: ports.clock,
    tasks: tasks.starter,
    checks: tasks.checks,
    namespaces,
    rateLimit: (tenant) => core.quotas.takeRequest(tenant),
    badSignatureLimit: (tenant) => core.quotas.takeBadSignature(tenant),
  });
  const schedules = new ScheduleService({
    schedules: core.stores.schedules,
    clock: ports.clock,
    tasks: tasks.starter,
    checks: tasks.checks,
    namespaces,
    scheduler: ports.scheduler ?? noScheduler,
    log: options.log,
  });
  const llmTraces = new LlmTraceService({
    store,
    blobs: ports.blobs,
    clock: ports.clock,
    tasks: tasks.reads,
    retentionDays: options.llmTraces?.retentionDays ?? DEFAULT_TRACE_RETENTION_DAYS,
  });

  const api: ApiDeps = {
    tasks,
    llmTraces,
    triggers,
    schedules,
    webhooks: core.webhooks,
    quotas: core.quotas,
    branches,
    retries,
    namespaces,
    keys,
    templates,
    events,
    streams,
    waits,
    tools: core.tools,
    toolSources: core.toolSources,
    knowledge: knowledge.service,
    log: options.log,
    config: {
      adminKey: options.adminKey,
      localMode: options.localMode,
      publicUrl: options.publicUrl,
      maxBodyBytes: options.maxBodyBytes,
      ...(options.anonymousRequestsPerSecond
        ? { anonymousRequestsPerSecond: options.anonymousRequestsPerSecond }
        : {}),
      ...(options.knowledge ? { maxUploadBytes: options.knowledge.maxUploadBytes } : {}),
    },
  };

  return {
    ...core,
    ports,
    /** Knowledge bases (API), ingest and search (the knowledge function's own services). */
    knowledge,
    keys,
    events,
    api,
    triggers,
    schedules,
  };
}

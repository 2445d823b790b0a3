/**
 * Builds the whole system from its ports: the services the API calls and the
 * dependencies of the step function. The Lambda entry files and the local stack
 * both call this, so the same wiring runs on AWS and on a laptop.
 */
import type { ApiDeps } from "@stackvm/api";
import {
  ApiKeyService,
  type Blobs,
  BranchService,
  builtinTools,
  type Clock,
  codeToolSource,
  createEvaluator,
  createLlmSession,
  createNamespaces,
  createPlanner,
  DEFAULT_EMBEDDING_MODEL,
  DEFAULT_QUOTAS,
  DEFAULT_TRACE_RETENTION_DAYS,
  type DocumentUploads,
  type EmbeddingPort,
  evaluationHook,
  httpToolSource,
  type ItemStore,
  type KnowledgeIndex,
  type KnowledgePort,
  knowledgeTools,
  type Lifecycle,
  type LlmConfig,
  type LlmPort,
  LlmTraceService,
  type Log,
  McpCallLimiter,
  type McpClient,
  mcpToolSource,
  monthMeter,
  type OutboundPolicy,
  Presenter,
  type Queue,
  QuotaService,
  quotaBranchEndHook,
  quotaTerminalHook,
  type Resolver,
  RetryService,
  RunningSlots,
  type SandboxPort,
  type SchedulerPort,
  ScheduleService,
  type SecretBox,
  StackVMError,
  type StepDeps,
  TaskEvents,
  TaskService,
  TaskStore,
  TemplateService,
  type TenantQuotas,
  type TerminalHook,
  TokenRelay,
  type Tool,
  ToolSourceService,
  TriggerService,
  taskAdmission,
  taskLifecycle,
  WaitService,
  type WakePort,
  WebhookService,
  webhookUrlCheck,
} from "@stackvm/core";
import type { RuntimeConfig } from "./config";
import type { DlqDeps } from "./dlq-handler";
import { createKnowledge, type KnowledgeOptions, knowledgePortOf } from "./knowledge";
import type { SweepHandlerDeps } from "./sweep-handler";

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

/** Where no secret box is configured: secret headers are refused, saying what to set. */
const noSecrets: SecretBox = {
  async seal() {
    throw new StackVMError(
      "invalid",
      "secrets_unavailable",
      "secret headers cannot be stored here: no key for secrets at rest is configured (STACKVM_TOOL_SECRETS_KMS_KEY, a KMS key, or STACKVM_TOOL_SECRETS_KEY, 32 bytes in base64)",
    );
  },
  async open() {
    throw new StackVMError("internal", "secrets_unavailable", "no key for secrets at rest");
  },
};

/** Where no MCP client is wired: servers cannot be listed or called. */
const noMcp: McpClient = {
  async listTools() {
    throw new StackVMError("invalid", "mcp_unavailable", "MCP servers are not available here");
  },
  async callTool() {
    throw new StackVMError("invalid", "mcp_unavailable", "MCP servers are not available here");
  },
};

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
      left: (tenant) => quotas.budgetLeft(tenant),
      record: (tenant, usage) => quotas.addToMonth(tenant, usage),
    },
  );
  const knowledgePort = ports.knowledge ?? knowledgePortOf(knowledge);
  // Knowledge's tools need its port: built-ins that come with a port.
  const tools: ReadonlyMap<string, Tool> = new Map([
    ...builtinTools(),
    ...knowledgeTools(knowledgePort).map((tool) => [tool.name, tool] as const),
  ]);
  const checkWebhookUrl = webhookUrlCheck(options.outbound);
  const store = new TaskStore(ports.items);
  // The one registry of tools: built-ins here (a built-in family that needs a port,
  // such as knowledge search, is added to this first list), then one source per
  // kind of namespace-owned tool.
  const secrets = ports.secrets ?? noSecrets;
  const mcp = ports.mcp ?? noMcp;
  const { namespaces, registry } = createNamespaces(ports.items, ports.clock, tools.values(), [
    codeToolSource,
    httpToolSource({ secret: (tenant) => webhooks.secret(tenant), now: ports.clock.now }),
    mcpToolSource({
      client: mcp,
      secrets,
      now: ports.clock.now,
      outbound: options.outbound,
      // One per process: the local worker's four slots, or one Lambda instance's.
      limiter: new McpCallLimiter(),
      log: options.log,
      saveTools: (tenant, ns, server, list, at) =>
        toolSources.saveTools(tenant, ns, server, list, at),
    }),
  ]);
  const toolSources = new ToolSourceService({
    namespaces,
    clock: ports.clock,
    secrets,
    mcp,
    outbound: options.outbound,
    builtinNames: () => registry.builtinNames(),
  });
  const keys = new ApiKeyService(ports.items, ports.clock);
  const presenter = new Presenter(ports.blobs, ports.clock.now);
  const quotas = new QuotaService({
    items: ports.items,
    store,
    clock: ports.clock,
    defaults: { ...DEFAULT_QUOTAS, ...options.quotas },
  });
  const slots = new RunningSlots({
    items: ports.items,
    store,
    queue: ports.queue,
    clock: ports.clock,
    log: options.log,
    limit: async (tenant) => (await quotas.limits(tenant)).max_running_tasks,
    monthSpent: (tenant) => quotas.monthSpent(tenant),
  });
  const webhooks = new WebhookService({
    items: ports.items,
    store,
    queue: ports.queue,
    clock: ports.clock,
    presenter,
    log: options.log,
    outbound: options.outbound,
    checkUrl: checkWebhookUrl,
    maxAttempts: options.webhooks?.maxAttempts ?? 5,
    backoffBaseSeconds: options.webhooks?.backoffBaseSeconds ?? 30,
    timeoutMs: options.webhooks?.timeoutMs ?? 10_000,
    ...(options.webhooks?.resolve ? { resolve: options.webhooks.resolve } : {}),
  });
  const tasks = new TaskService({
    store,
    blobs: ports.blobs,
    queue: ports.queue,
    clock: ports.clock,
    namespaces,
    presenter,
    tools,
    checkWebhookUrl,
    admission: taskAdmission(quotas, slots),
    deliveries: (tenant, taskId) => webhooks.deliveries(tenant, taskId),
    ...(options.llmConfigured === undefined ? {} : { llmConfigured: options.llmConfigured }),
  });
  const branches = new BranchService({
    store,
    blobs: ports.blobs,
    queue: ports.queue,
    clock: ports.clock,
    presenter,
    tasks,
  });
  const retries = new RetryService({
    store,
    queue: ports.queue,
    clock: ports.clock,
    presenter,
    tasks,
    branches,
  });
  const templates = new TemplateService({
    items: ports.items,
    clock: ports.clock,
    tasks,
    branches,
  });
  const waits = new WaitService({
    store,
    queue: ports.queue,
    clock: ports.clock,
    presenter,
    tasks,
    slots,
    log: options.log,
    secret: (tenant) => webhooks.secret(tenant),
    existingSecret: (tenant) => webhooks.existingSecret(tenant),
    notify: (branch, url) => webhooks.notifyWaiting(branch, url),
    publicUrl: options.resolvePublicUrl ?? (() => options.publicUrl),
  });
  // Live LLM text, from the worker's steps to the API's event streams.
  const tokens = new TokenRelay({ items: ports.items, clock: ports.clock, log: options.log });
  const events = new TaskEvents({ store, tasks, presenter, clock: ports.clock, tokens });
  // Evaluation runs first, so that later hooks (outgoing webhooks) see the task as it ends.
  const lifecycle: Lifecycle = taskLifecycle(store, ports.clock, {
    onBranchEnd: [quotaBranchEndHook(quotas)],
    evaluation: evaluationHook({
      store,
      branches,
      log: options.log,
      // A task that ends on an earlier round's branch runs the hooks for that branch.
      onTaskEnd: (branch) => lifecycle.onTerminal(branch),
    }),
    afterTerminal: [
      ...(options.afterTerminal ?? []),
      webhooks.terminalHook(),
      quotaTerminalHook(slots),
    ],
  });
  const traceRetentionDays = options.llmTraces?.retentionDays ?? DEFAULT_TRACE_RETENTION_DAYS;
  const traceSecrets = options.llmTraces?.secrets ?? [];
  const planner = createPlanner({
    clock: ports.clock,
    repairRounds: options.planRepairs,
    findTemplate: (tenant, namespace, goal) => templates.find(tenant, namespace, goal),
  });

  const triggers = new TriggerService({
    items: ports.items,
    clock: ports.clock,
    tasks,
    namespaces,
    rateLimit: (tenant) => quotas.takeRequest(tenant),
    badSignatureLimit: (tenant) => quotas.takeBadSignature(tenant),
  });
  const schedules = new ScheduleService({
    items: ports.items,
    clock: ports.clock,
    tasks,
    namespaces,
    scheduler: ports.scheduler ?? noScheduler,
    log: options.log,
  });

  const step: StepDeps = {
    meter: (tenant, taskId, branch) => monthMeter(quotas, ports.items, tenant, taskId, branch),
    store,
    blobs: ports.blobs,
    queue: ports.queue,
    clock: ports.clock,
    sandbox: ports.sandbox,
    llm: (budget, traceTo, giveUpAt, sink, watch) =>
      createLlmSession({
        port: ports.llm,
        config: options.llm,
        budget,
        now: ports.clock.now,
        ...(giveUpAt === undefined ? {} : { giveUpAt }),
        ...(sink ? { tokens: sink } : {}),
        ...(watch ? { watch } : {}),
        ...(traceTo && traceRetentionDays > 0
          ? { trace: { blobs: ports.blobs, prefix: traceTo, secrets: traceSecrets } }
          : {}),
      }),
    tools,
    registry,
    planner,
    tokens: (target) => tokens.sink(target),
    evaluator: createEvaluator(),
    log: options.log,
    outbound: options.outbound,
    maxPlanUpdates: options.maxPlanUpdates,
    ...(options.llmConfigured === undefined ? {} : { llmConfigured: options.llmConfigured }),
    ...(options.llmUnreachableMs === undefined
      ? {}
      : { llmUnreachableMs: options.llmUnreachableMs }),
    onStart: lifecycle.onStart,
    onTerminal: lifecycle.onTerminal,
    onWaiting: waits.waitingHook(),
    onResume: waits.resumeHook(),
    resumeSlot: (branch) => waits.resumeSlot(branch),
    ...(ports.wakes ? { wakes: ports.wakes } : {}),
  };

  const llmTraces = new LlmTraceService({
    store,
    blobs: ports.blobs,
    clock: ports.clock,
    tasks,
    retentionDays: traceRetentionDays,
  });

  const api: ApiDeps = {
    tasks,
    llmTraces,
    triggers,
    schedules,
    webhooks,
    quotas,
    branches,
    retries,
    namespaces,
    keys,
    templates,
    events,
    waits,
    tools,
    toolSources,
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
    ports,
    /** Knowledge bases (API), ingest and search (the knowledge function's own services). */
    knowledge,
    /** What the worker asks of knowledge: the knowledge function on AWS, these services otherwise. */
    knowledgePort,
    store,
    namespaces,
    keys,
    presenter,
    tasks,
    branches,
    templates,
    events,
    lifecycle,
    step,
    api,
    quotas,
    slots,
    webhooks,
    waits,
    triggers,
    schedules,
    /** What the DLQ consumer needs (dlq.ts on AWS, the local stack's DLQ poller). */
    dlq: {
      store,
      log: options.log,
      clock: ports.clock,
      onTerminal: lifecycle.onTerminal,
      items: ports.items,
    } satisfies DlqDeps,
    /** What the sweep of stalled branches needs, for branches idle longer than `stalledMs`. */
    sweep: (stalledMs: number): SweepHandlerDeps => ({
      items: ports.items,
      queue: ports.queue,
      clock: ports.clock,
      log: options.log,
      slots,
      tasks,
      stalledMs,
    }),
  };
}

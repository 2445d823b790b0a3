/**
 * What running steps needs, built from the ports: the step function's
 * dependencies, the services its hooks call (quotas, running slots, outgoing
 * webhooks, waits, templates for the planner, branches for evaluation), the
 * tool registry. The worker builds only this (worker.ts), so that its cold
 * start neither loads nor builds what only the API, the schedules or the
 * knowledge function use; `createSystem` (system.ts) builds it and adds those,
 * so the wiring of a step is the same in every function and on the local stack.
 */
import {
  type Blobs,
  BranchService,
  builtinTools,
  type Clock,
  codeToolSource,
  createEvaluator,
  createLlmSession,
  createNamespaces,
  createPlanner,
  createStores,
  DEFAULT_QUOTAS,
  DEFAULT_TRACE_RETENTION_DAYS,
  evaluationHook,
  httpToolSource,
  type ItemStore,
  type KnowledgePort,
  knowledgeTools,
  type Lifecycle,
  type LlmPort,
  McpCallLimiter,
  type McpClient,
  mcpToolSource,
  monthMeter,
  Presenter,
  type Queue,
  QuotaService,
  quotaBranchEndHook,
  quotaTerminalHook,
  RunningSlots,
  type SandboxPort,
  type SchedulerPort,
  type SecretBox,
  StackVMError,
  type StepDeps,
  TaskService,
  TemplateService,
  TokenRelay,
  type Tool,
  ToolSourceService,
  taskAdmission,
  taskLifecycle,
  WaitService,
  type WakePort,
  WebhookService,
  webhookTargetCheck,
  webhookUrlCheck,
} from "@stackvm/core";
import type { DlqDeps } from "./dlq-handler";
import type { SweepHandlerDeps } from "./sweep-handler";
import type { SystemOptions } from "./system-options";

/** The ports steps use; knowledge only through its port (the knowledge function, or this process's services). */
export interface StepPorts {
  items: ItemStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  sandbox: SandboxPort;
  llm: LlmPort;
  /** Where `vector_search` and `retrieve_knowledge_graph` go, and ingest messages. */
  knowledge: KnowledgePort;
  /** Timers of the tenants' schedules; none: schedules cannot be created. */
  scheduler?: SchedulerPort;
  /** Wakes of waiting branches past the queue's 15-minute delay; none: the queue's wake hides itself again until due. */
  wakes?: WakePort;
  /** Seals the secret headers of MCP servers at rest; none: secret headers are refused with a reason. */
  secrets?: SecretBox;
  /** The MCP client; none: MCP servers cannot be added. */
  mcp?: McpClient;
}

export type StepSystem = ReturnType<typeof createStepSystem>;

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

/**
 * Builds what running steps needs (see the module's comment).
 *
 * @example
 * const system = createStepSystem({ items, blobs, queue, clock, sandbox, llm, knowledge }, options);
 * const handle = createWorkerHandler(system.step, system.webhooks, system.knowledgePort);
 */
export function createStepSystem(ports: StepPorts, options: SystemOptions) {
  const knowledgePort = ports.knowledge;
  // Knowledge's tools need its port: built-ins that come with a port.
  const tools: ReadonlyMap<string, Tool> = new Map([
    ...builtinTools(),
    ...knowledgeTools(knowledgePort).map((tool) => [tool.name, tool] as const),
  ]);
  const checkWebhookUrl = webhookUrlCheck(options.outbound);
  const stores = createStores(ports.items);
  const store = stores.tasks;
  // The one registry of tools: built-ins here (a built-in family that needs a port,
  // such as knowledge search, is added to this first list), then one source per
  // kind of namespace-owned tool.
  const secrets = ports.secrets ?? noSecrets;
  const mcp = ports.mcp ?? noMcp;
  const { namespaces, registry } = createNamespaces(
    stores.namespaces,
    ports.clock,
    tools.values(),
    [
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
    ],
  );
  const toolSources = new ToolSourceService({
    namespaces,
    clock: ports.clock,
    secrets,
    mcp,
    outbound: options.outbound,
    builtinNames: () => registry.builtinNames(),
  });
  const presenter = new Presenter(ports.blobs, ports.clock.now);
  const quotas = new QuotaService({
    quotaStore: stores.quotas,
    store,
    clock: ports.clock,
    defaults: { ...DEFAULT_QUOTAS, ...options.quotas },
  });
  const slots = new RunningSlots({
    slots: stores.slots,
    store,
    queue: ports.queue,
    clock: ports.clock,
    log: options.log,
    limit: async (tenant) => (await quotas.limits(tenant)).max_running_tasks,
    monthSpent: (tenant) => quotas.monthSpent(tenant),
  });
  const webhooks = new WebhookService({
    webhookStore: stores.webhooks,
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
    // At the door, also the addresses the URL's name resolves to now (delivery checks each connection).
    checkWebhookUrl: webhookTargetCheck(options.outbound),
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
    tasks: tasks.reads,
    checks: tasks.checks,
    admission: tasks.admission,
  });
  const templates = new TemplateService({
    templates: stores.templates,
    clock: ports.clock,
    tasks: tasks.reads,
    branches,
  });
  const waits = new WaitService({
    store,
    queue: ports.queue,
    clock: ports.clock,
    presenter,
    tasks: tasks.reads,
    slots,
    log: options.log,
    secret: (tenant) => webhooks.secret(tenant),
    existingSecret: (tenant) => webhooks.existingSecret(tenant),
    notify: (branch, url) => webhooks.notifyWaiting(branch, url),
    publicUrl: options.resolvePublicUrl ?? (() => options.publicUrl),
  });
  // Live LLM text, from the worker's steps to the API's event streams.
  const tokens = new TokenRelay({ live: stores.liveText, clock: ports.clock, log: options.log });
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

  const step: StepDeps = {
    meter: (tenant, taskId, branch) => monthMeter(quotas, stores.quotas, tenant, taskId, branch),
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

  return {
    ports,
    /** What the worker asks of knowledge: the knowledge function on AWS, this process's services otherwise. */
    knowledgePort,
    tools,
    store,
    stores,
    namespaces,
    toolSources,
    presenter,
    tasks,
    branches,
    templates,
    tokens,
    lifecycle,
    step,
    quotas,
    slots,
    webhooks,
    waits,
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
      index: stores.sweepIndex,
      queue: ports.queue,
      clock: ports.clock,
      log: options.log,
      slots,
      tasks,
      stalledMs,
    }),
  };
}

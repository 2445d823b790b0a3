/**
 * The system's one assembly, the same on every runtime: what running steps
 * needs (`createStepSystem`: core's wiring of the step services, plus the
 * knowledge port the worker hands its ingest messages to and the DLQ's and the
 * sweep's dependencies), and the whole system over it (`createSystem`: the
 * services the API calls, the schedules' and knowledge's own). A runtime gives
 * only its ports and options: `aws-system.ts` on AWS (the worker builds the
 * step system alone, every other function the whole one), `local-system.ts` in
 * `@stackvm/local` over the emulators. The worker's bundle carries nothing of
 * `createSystem` (the package has no side effects at import, so the bundler
 * drops what the worker does not call; test/infra/cold-start.test.ts checks).
 */
import type { ApiDeps } from "@stackvm/api";
import {
  DEFAULT_EMBEDDING_MODEL,
  type DocumentUploads,
  type EmbeddingPort,
  type KnowledgeIndex,
  type KnowledgePort,
  StackVMError,
  type WiringPorts,
  wireApiServices,
  wireStepServices,
} from "@stackvm/core";
import type { DlqDeps } from "./dlq-handler";
import { createKnowledge, knowledgePortOf } from "./knowledge";
import type { SweepHandlerDeps } from "./sweep-handler";
import type { SystemOptions } from "./system-options";

/** The ports steps use; knowledge only through its port (the knowledge function, or this process's services). */
export interface StepPorts extends WiringPorts {
  /** Where `vector_search` and `retrieve_knowledge_graph` go, and ingest messages. */
  knowledge: KnowledgePort;
}

export type StepSystem = ReturnType<typeof createStepSystem>;

/**
 * Builds what running steps needs (see the module's comment).
 *
 * @example
 * const system = createStepSystem({ items, blobs, queue, clock, sandbox, llm, knowledge }, options);
 * const handle = createWorkerHandler(system.step, system.webhooks, system.knowledgePort);
 */
export function createStepSystem(given: StepPorts, options: SystemOptions) {
  const { tracing } = options;
  // Spans around the LLM's calls and knowledge's searches, where tracing is set.
  const ports: StepPorts = tracing
    ? {
        ...given,
        llm: tracing.llm(given.llm, options.llmProvider ?? "openai"),
        knowledge: tracing.knowledge(given.knowledge),
      }
    : given;
  const services = wireStepServices(ports, options);
  if (tracing) services.step.tracer = tracing;
  const { store, stores, lifecycle, slots, tasks } = services;
  return {
    ...services,
    ports,
    /** What the worker asks of knowledge: the knowledge function on AWS, this process's services otherwise. */
    knowledgePort: ports.knowledge,
    /** What the DLQ consumer needs (dlq.ts on AWS, the local stack's DLQ poller). */
    dlq: {
      store,
      log: options.log,
      clock: ports.clock,
      onTerminal: lifecycle.onTerminal,
      knowledge: stores.knowledge,
    } satisfies DlqDeps,
    /** What the sweep of stalled branches needs, for branches idle longer than `stalledMs`. */
    sweep: (stalledMs: number): SweepHandlerDeps => ({
      store,
      index: stores.sweepIndex,
      queue: ports.queue,
      clock: ports.clock,
      log: options.log,
      slots,
      tasks,
      stalledMs,
      retention: services.retention,
    }),
  };
}

export interface SystemPorts extends Omit<WiringPorts, "knowledge"> {
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
  /**
   * What answers `GET /v1/doctor`: only a process that holds the LLM, the
   * embeddings and the sandbox can check them (the local stack); none: 404.
   */
  doctor?: ApiDeps["doctor"];
}

export type { SystemOptions } from "./system-options";
export { systemOptions } from "./system-options";

export type System = ReturnType<typeof createSystem>;

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
  // The API's services, over the same step services.
  const { keys, retries, events, streams, streamTokens, triggers, schedules, llmTraces, threads } =
    wireApiServices(core, ports, options);
  const { tasks, branches, namespaces, templates, waits } = core;

  const api: ApiDeps = {
    tasks,
    threads,
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
    streamTokens,
    waits,
    retention: core.retention,
    tools: core.tools,
    toolSources: core.toolSources,
    knowledge: knowledge.service,
    files: core.files,
    ...(ports.doctor ? { doctor: ports.doctor } : {}),
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
      ...(options.mcpWaitSeconds ? { mcpWaitMs: options.mcpWaitSeconds * 1000 } : {}),
      ...(options.corsOrigins?.length ? { corsOrigins: options.corsOrigins } : {}),
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

/**
 * What running steps needs, built from the ports: core's wiring of the step
 * services (`wireStepServices`), plus what only the functions add: the
 * knowledge port the worker hands its ingest messages to, and the DLQ's and the
 * sweep's dependencies. The worker builds only this (worker.ts), so that its
 * cold start neither loads nor builds what only the API, the schedules or the
 * knowledge function use; `createSystem` (system.ts) builds it and adds those,
 * so the wiring of a step is the same in every function and on the local stack.
 */
import { type KnowledgePort, type WiringPorts, wireStepServices } from "@stackvm/core";
import type { DlqDeps } from "./dlq-handler";
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

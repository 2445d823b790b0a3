/**
 * What `runStep` is given, from the wired services: the LLM session each step
 * opens (with its traces, its give-up time and the live text it streams), the
 * month meter, the planner over the templates, and the hooks of the lifecycle
 * and the waits.
 */
import { createLlmSession } from "../llm/session";
import { DEFAULT_TRACE_RETENTION_DAYS } from "../llm/trace";
import { lazyPlanner } from "../planning/lazy-planner";
import { createEvaluator } from "../service/evaluation";
import type { Lifecycle } from "../service/lifecycle";
import { monthMeter } from "../service/month-meter";
import type { QuotaService } from "../service/quotas";
import type { TemplateService } from "../service/templates";
import type { TokenRelay } from "../service/token-relay";
import type { WaitService } from "../service/waits";
import type { Stores } from "../store/stores";
import type { ToolRegistry } from "../tools/registry";
import type { Tool } from "../tools/tool";
import type { StepDeps } from "../vm/step-deps";
import type { WiringOptions, WiringPorts } from "./options";

/** The services a step's dependencies are drawn from. */
export interface StepServices {
  stores: Stores;
  tools: ReadonlyMap<string, Tool>;
  registry: ToolRegistry;
  quotas: QuotaService;
  templates: TemplateService;
  tokens: TokenRelay;
  lifecycle: Lifecycle;
  waits: WaitService;
}

/**
 * Builds the step function's dependencies.
 *
 * @example
 * const step = wireStepDeps(ports, options, services);
 * await runStep(step, message);
 */
export function wireStepDeps(
  ports: WiringPorts,
  options: WiringOptions,
  services: StepServices,
): StepDeps {
  const { stores, quotas, templates, tokens, lifecycle, waits } = services;
  const traceRetentionDays = options.llmTraces?.retentionDays ?? DEFAULT_TRACE_RETENTION_DAYS;
  const traceSecrets = options.llmTraces?.secrets ?? [];
  return {
    meter: (tenant, taskId, branch) => monthMeter(quotas, stores.quotas, tenant, taskId, branch),
    store: stores.tasks,
    held: stores.heldResults,
    blobs: ports.blobs,
    queue: ports.queue,
    clock: ports.clock,
    sandbox: ports.sandbox,
    files: stores.files,
    llm: (budget, traceTo, giveUpAt, sink, watch) =>
      createLlmSession({
        port: ports.llm,
        config: options.llm,
        budget,
        now: ports.clock.now,
        ...(options.llmSleep ? { sleep: options.llmSleep } : {}),
        ...(giveUpAt === undefined ? {} : { giveUpAt }),
        ...(sink ? { tokens: sink } : {}),
        ...(watch && options.watchCalls !== false ? { watch } : {}),
        ...(traceTo && traceRetentionDays > 0
          ? { trace: { blobs: ports.blobs, prefix: traceTo, secrets: traceSecrets } }
          : {}),
      }),
    tools: services.tools,
    registry: services.registry,
    // Loaded by the first step that plans: most steps run an instruction.
    planner: lazyPlanner({
      clock: ports.clock,
      repairRounds: options.planRepairs,
      findTemplate: (tenant, namespace, goal) => templates.find(tenant, namespace, goal),
    }),
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
}

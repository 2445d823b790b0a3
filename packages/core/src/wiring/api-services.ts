/**
 * The services only the API (and the schedules' function) calls, wired over the
 * step services (`step-services.ts`): API keys, retries, task events and their
 * stream leases and stream tokens, triggers, schedules, LLM traces and threads.
 */
import { DEFAULT_TRACE_RETENTION_DAYS } from "../llm/trace";
import { ApiKeyService } from "../service/api-keys";
import { TaskEvents } from "../service/events";
import { LlmTraceService } from "../service/llm-traces";
import { RetryService } from "../service/retry";
import { ScheduleService } from "../service/schedules";
import { StreamLeases } from "../service/stream-leases";
import { StreamTokens } from "../service/stream-tokens";
import { ThreadService } from "../service/threads";
import { TriggerService } from "../service/triggers";
import type { WiringOptions, WiringPorts } from "./options";
import type { WiredStepServices } from "./step-services";
import { noScheduler } from "./unconfigured";

/** What {@link wireApiServices} builds. */
export type WiredApiServices = ReturnType<typeof wireApiServices>;

/**
 * Builds the API's services over the step services.
 *
 * @example
 * const services = wireStepServices(ports, options);
 * const api = wireApiServices(services, ports, options);
 */
export function wireApiServices(
  step: WiredStepServices,
  ports: Pick<WiringPorts, "blobs" | "queue" | "clock" | "scheduler">,
  options: Pick<WiringOptions, "log" | "llmTraces">,
) {
  const { store, stores, presenter, tasks, branches, namespaces, quotas } = step;
  const { clock, queue, blobs } = ports;
  const keys = new ApiKeyService(stores.apiKeys, clock);
  const retries = new RetryService({
    store,
    queue,
    clock,
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
    clock,
    tokens: step.tokens,
  });
  const streams = new StreamLeases({
    leases: stores.streamLeases,
    clock,
    limit: async (tenant) => (await quotas.limits(tenant)).max_open_streams,
    log: options.log,
  });
  // Signed with the tenant's signing secret, under a key of their own (stream-tokens.ts).
  const streamTokens = new StreamTokens({
    clock,
    secret: (tenant) => step.webhooks.secret(tenant),
    existingSecret: (tenant) => step.webhooks.existingSecret(tenant),
  });
  const triggers = new TriggerService({
    triggers: stores.triggers,
    clock,
    tasks: tasks.starter,
    checks: tasks.checks,
    namespaces,
    rateLimit: (tenant) => quotas.takeRequest(tenant),
    badSignatureLimit: (tenant) => quotas.takeBadSignature(tenant),
  });
  const schedules = new ScheduleService({
    schedules: stores.schedules,
    clock,
    tasks: tasks.starter,
    checks: tasks.checks,
    namespaces,
    scheduler: ports.scheduler ?? noScheduler,
    log: options.log,
  });
  const llmTraces = new LlmTraceService({
    store,
    blobs,
    clock,
    tasks: tasks.reads,
    retentionDays: options.llmTraces?.retentionDays ?? DEFAULT_TRACE_RETENTION_DAYS,
  });
  const threads = new ThreadService({ tasks, store, threads: stores.threads, blobs, clock });
  return { keys, retries, events, streams, streamTokens, triggers, schedules, llmTraces, threads };
}

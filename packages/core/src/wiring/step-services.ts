/**
 * What running steps needs, wired from the ports: the step function's
 * dependencies and the services its hooks call (quotas, running slots,
 * outgoing webhooks, waits, templates for the planner, branches for
 * evaluation), with the tool registry. The worker builds only this, the whole
 * system adds the API's services to it (`api-services.ts`), and the test
 * systems build both over the in-memory ports: one wiring everywhere.
 */
import type { FileService } from "../files/file-service";
import { lazyPort } from "../lazy-port";
import { webhookTargetCheck, webhookUrlCheck } from "../net/webhook-url";
import { evaluationHook } from "../service/evaluation";
import { type Lifecycle, taskLifecycle } from "../service/lifecycle";
import { Presenter } from "../service/present";
import {
  DEFAULT_QUOTAS,
  QuotaService,
  quotaBranchEndHook,
  quotaTerminalHook,
  taskAdmission,
} from "../service/quotas";
import type { Retention } from "../service/retention";
import { retentionHook } from "../service/retention-hook";
import { RunningSlots } from "../service/running-slots";
import type { TemplateService } from "../service/templates";
import { TokenRelay } from "../service/token-relay";
import { WaitService } from "../service/waits";
import { WebhookService } from "../service/webhooks";
import { createStores } from "../store/stores";
import type { WiringOptions, WiringPorts } from "./options";
import { wireStepDeps } from "./step-deps";
import { wireTaskServices } from "./task-services";
import { wireTools } from "./tool-services";

/** The largest file one multipart upload carries when the options do not say (5 MiB). */
const DEFAULT_FILE_UPLOAD_BYTES = 5 << 20;

/** What {@link wireStepServices} builds. */
export type WiredStepServices = ReturnType<typeof wireStepServices>;

/**
 * Builds what running steps needs (see the module's comment).
 *
 * @example
 * const services = wireStepServices({ items, blobs, queue, clock, sandbox, llm }, options);
 * await runStep(services.step, message);
 */
export function wireStepServices(ports: WiringPorts, options: WiringOptions) {
  const { clock, queue, blobs } = ports;
  const { log, outbound } = options;
  const stores = createStores(ports.items);
  const store = stores.tasks;
  const { tools, namespaces, registry, toolSources } = wireTools(ports, {
    namespaces: stores.namespaces,
    clock,
    log,
    outbound,
    secret: (tenant) => webhooks.secret(tenant),
    ...(options.web ? { web: options.web } : {}),
  });
  const presenter = new Presenter(blobs, clock.now);
  const quotas = new QuotaService({
    quotaStore: stores.quotas,
    store,
    clock,
    defaults: { ...DEFAULT_QUOTAS, ...options.quotas },
  });
  const slots = new RunningSlots({
    slots: stores.slots,
    store,
    queue,
    clock,
    log,
    limit: async (tenant) => (await quotas.limits(tenant)).max_running_tasks,
    monthSpent: (tenant) => quotas.monthSpent(tenant),
  });
  const hooks = options.webhooks ?? {};
  const webhooks = new WebhookService({
    webhookStore: stores.webhooks,
    store,
    queue,
    clock,
    presenter,
    log,
    outbound,
    checkUrl: hooks.checkUrl ?? webhookUrlCheck(outbound),
    maxAttempts: hooks.maxAttempts ?? 5,
    backoffBaseSeconds: hooks.backoffBaseSeconds ?? 30,
    timeoutMs: hooks.timeoutMs ?? 10_000,
    ...(hooks.resolve ? { resolve: hooks.resolve } : {}),
  });
  // Loaded on first use: the worker reads a file only for a task started with one.
  const files = lazyPort<FileService>(async () => {
    const { FileService } = await import("../files/file-service");
    return new FileService({
      files: stores.files,
      storage: quotas,
      blobs,
      clock,
      maxUploadBytes: options.files?.maxUploadBytes ?? DEFAULT_FILE_UPLOAD_BYTES,
      ...(ports.uploads ? { uploads: ports.uploads } : {}),
      ...(options.files?.maxFileBytes ? { maxFileBytes: options.files.maxFileBytes } : {}),
    });
  });
  const { tasks, branches } = wireTaskServices({
    readyFile: (tenant, id) => files.ready(tenant, id),
    store,
    blobs,
    queue,
    clock,
    namespaces,
    presenter,
    tools,
    // At the door, also the addresses the URL's name resolves to now (delivery checks each connection).
    checkWebhookUrl: hooks.checkUrl ?? webhookTargetCheck(outbound),
    admission: taskAdmission(quotas, slots),
    deliveries: (tenant, taskId) => webhooks.deliveries(tenant, taskId),
    ...(options.llmConfigured === undefined ? {} : { llmConfigured: options.llmConfigured }),
  });
  // Loaded on first use: a plan saved as a template or read from one.
  const templates = lazyPort<TemplateService>(async () => {
    const { TemplateService } = await import("../service/templates");
    return new TemplateService({
      templates: stores.templates,
      clock,
      tasks: tasks.reads,
      branches,
    });
  });
  const waits = new WaitService({
    store,
    queue,
    clock,
    presenter,
    tasks: tasks.reads,
    slots,
    log,
    secret: (tenant) => webhooks.secret(tenant),
    existingSecret: (tenant) => webhooks.existingSecret(tenant),
    notify: (branch, url) => webhooks.notifyWaiting(branch, url),
    publicUrl: options.resolvePublicUrl ?? (() => options.publicUrl),
  });
  // Live LLM text, from the worker's steps to the API's event streams.
  const tokens = new TokenRelay({ live: stores.liveText, clock, log });
  // Finished tasks expire after their namespace's, the tenant's or the deployment's days;
  // loaded on first use (a task's end, the sweep, a keep).
  const retention = lazyPort<Retention>(async () => {
    const { Retention } = await import("../service/retention");
    return new Retention({
      store,
      expiries: stores.expiries,
      blobs: ports.blobs,
      clock,
      log,
      tenantDays: async (tenant) => (await quotas.limits(tenant)).retention_days,
    });
  });
  // Evaluation runs first, so that later hooks (outgoing webhooks) see the task as it ends.
  const lifecycle: Lifecycle = taskLifecycle(store, clock, {
    onBranchEnd: [quotaBranchEndHook(quotas)],
    evaluation: evaluationHook({
      store,
      branches,
      log,
      // A task that ends on an earlier round's branch runs the hooks for that branch.
      onTaskEnd: (branch) => lifecycle.onTerminal(branch),
    }),
    afterTerminal: [
      ...(options.afterTerminal ?? []),
      webhooks.terminalHook(),
      quotaTerminalHook(slots),
      retentionHook(retention),
    ],
  });
  const step = wireStepDeps(ports, options, {
    stores,
    tools,
    registry,
    quotas,
    templates,
    tokens,
    lifecycle,
    waits,
  });
  return {
    ports,
    files,
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
    retention,
  };
}

/**
 * The in-memory core system with the integrator's services wired as the real
 * system wires them: the same `wireStepServices` and `wireApiServices` as
 * `functions/src/system.ts`, over the in-memory ports, with the options tests
 * need (no wait between LLM attempts, webhook URLs on loopback accepted, a
 * scheduler that remembers its timers). For the services' unit tests.
 */

import { LOOPBACK_OPENED } from "../net/outbound-policy";
import type { Resolver } from "../net/resolver";
import { silentLog } from "../ports/log";
import type { SchedulerPort, ScheduleTimer } from "../ports/scheduler";
import type { TenantQuotas } from "../service/quotas";
import { runMember } from "../vm/member";
import { parseQueueMessage } from "../vm/queue-message";
import { runStep } from "../vm/step";
import type { TerminalHook } from "../vm/step-deps";
import { wireApiServices } from "../wiring/api-services";
import type { WiringOptions } from "../wiring/options";
import { wireStepServices } from "../wiring/step-services";
import { memoryPorts } from "./memory-system";

/** A scheduler port that remembers the timers it was given. */
export class FakeScheduler implements SchedulerPort {
  readonly timers = new Map<string, ScheduleTimer>();
  async put(timer: ScheduleTimer) {
    this.timers.set(`${timer.tenant_id}/${timer.schedule_id}`, timer);
  }
  async delete(tenant: string, id: string) {
    this.timers.delete(`${tenant}/${id}`);
  }
}

export interface IntegrateOptions {
  quotas?: Partial<TenantQuotas>;
  /** Runs when a task ended, before the integrator's hooks (tests make it throw to play a crash). */
  beforeHooks?: TerminalHook;
  webhookBackoffSeconds?: number;
  webhookMaxAttempts?: number;
  /** Name resolution of webhook deliveries (none: the system's resolver). */
  resolve?: Resolver;
}

/**
 * Builds the integrator's system over the in-memory ports.
 *
 * @example
 * const sys = integrateSystem({ quotas: { max_running_tasks: 1 } });
 * await sys.tasks.start(...); await sys.drain();
 */
export function integrateSystem(options: IntegrateOptions = {}) {
  const base = memoryPorts();
  const scheduler = new FakeScheduler();
  const ports = { ...base.ports, scheduler };
  const wiring: WiringOptions = {
    llm: base.llmConfig,
    log: silentLog,
    // The operator's opt-in, as a developer gives it (tests call servers on loopback).
    outbound: LOOPBACK_OPENED,
    publicUrl: null,
    maxPlanUpdates: 3,
    planRepairs: 2,
    // Retries of the LLM do not wait on the real clock.
    llmSleep: async () => undefined,
    llmTraces: { retentionDays: 0, secrets: [] },
    // Tests that crash a step at its branch's write mean the head move.
    watchCalls: false,
    afterTerminal: options.beforeHooks ? [options.beforeHooks] : [],
    ...(options.quotas ? { quotas: options.quotas } : {}),
    webhooks: {
      maxAttempts: options.webhookMaxAttempts ?? 5,
      backoffBaseSeconds: options.webhookBackoffSeconds ?? 1,
      timeoutMs: 2000,
      // Receivers on loopback, and names that must not be looked up from a test.
      checkUrl: () => undefined,
      ...(options.resolve ? { resolve: options.resolve } : {}),
    },
  };
  const services = wireStepServices(ports, wiring);
  const api = wireApiServices(services, ports, wiring);
  const { queue } = base.ports;
  const { step, webhooks } = services;
  /** Delivers every deliverable message (steps and webhooks) until none is left. */
  const drain = () =>
    queue.drain(async (message) => {
      const parsed = parseQueueMessage(message.body);
      if (!parsed.ok) throw new Error(`unreadable ${parsed.kind} message`);
      const body = parsed.message;
      if (body.kind === "webhook") {
        const result = await webhooks.deliver(body, message.receiveCount);
        if (result.retryAfterSeconds !== undefined) {
          await queue.retryAfter(message.receiptHandle, result.retryAfterSeconds);
          throw new Error("webhook attempt failed");
        }
        return;
      }
      if (body.kind === "ingest") throw new Error("this system has no knowledge to ingest into");
      await (body.kind === "member" ? runMember(step, body) : runStep(step, body));
    });
  return {
    ...base.ports,
    ...services,
    ...api,
    scheduler,
    drain,
  };
}

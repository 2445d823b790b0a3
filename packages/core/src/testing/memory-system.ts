/**
 * A minimal core system over the in-memory adapters, for unit tests of the VM
 * and the services. Minimal on purpose: many tests count the item store's reads
 * and writes per step through `items` (`countingStore`), and the hooks the full
 * wiring adds to every step (the month meter and running slots of quotas, live
 * text, waits, evaluation, outgoing webhooks) would read and write more. So it
 * shares only the pieces of core's wiring that do not change what a step reads
 * and writes: the in-memory ports (`memoryPorts`, which `integrateSystem`
 * builds on too) and tasks with their branches (`wireTaskServices`); tests of
 * the integrator's services use `integrateSystem`, the full wiring.
 */

import { LlmConfig } from "../llm/config";
import { createLlmSession } from "../llm/session";
import { LOOPBACK_OPENED } from "../net/outbound-policy";
import { lazyPlanner } from "../planning/lazy-planner";
import type { Clock } from "../ports/clock";
import type { ItemStore } from "../ports/item-store";
import type { LlmPort, LlmRequest, LlmResponse } from "../ports/llm";
import { silentLog } from "../ports/log";
import type { SandboxPort } from "../ports/sandbox";
import { taskLifecycle } from "../service/lifecycle";
import { LlmTraceService } from "../service/llm-traces";
import { createNamespaces } from "../service/namespaces";
import { Presenter } from "../service/present";
import { createStores } from "../store/stores";
import { codeToolSource } from "../tools/code-tool";
import { builtinTools } from "../tools/registry";
import type { Tool } from "../tools/tool";
import { deadLetterReason, endDeadLetteredBranch } from "../vm/dead-letter";
import { runMember } from "../vm/member";
import { type MemberMessage, memberStep, type StepMessage } from "../vm/message";
import { parseQueueMessage } from "../vm/queue-message";
import { runStep } from "../vm/step";
import type { StepDeps } from "../vm/step-deps";
import { wireTaskServices } from "../wiring/task-services";
import { MemoryBlobs } from "./memory/memory-blobs";
import { MemoryItemStore } from "./memory/memory-item-store";
import { MemoryQueue } from "./memory/memory-queue";

/** A clock that tests move by hand. */
export class ManualClock implements Clock {
  constructor(public time = Date.parse("2026-01-01T00:00:00Z")) {}
  now = () => this.time;
  advance(ms: number) {
    this.time += ms;
  }
}

/** An LLM port that answers with a function of the request. */
export class FakeLlm implements LlmPort {
  readonly requests: LlmRequest[] = [];
  constructor(public answer: (request: LlmRequest) => string = () => "ok") {}
  async complete(request: LlmRequest): Promise<LlmResponse> {
    this.requests.push(request);
    const text = this.answer(request);
    return { text, model: request.model, inputTokens: 10, outputTokens: 5 };
  }
}

/** Counts the calls made to an item store, by method. */
export function countingStore(inner: ItemStore): ItemStore & { counts: Record<string, number> } {
  const counts: Record<string, number> = {};
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "counts") return counts;
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        counts[String(prop)] = (counts[String(prop)] ?? 0) + 1;
        return value.apply(target, args);
      };
    },
  }) as ItemStore & { counts: Record<string, number> };
}

const LLM_CONFIG = LlmConfig.parse({
  models: { default: "test-model", reason: "test-model", eval: "test-model" },
  timeoutMs: 1000,
  maxAttempts: 2,
  repairRounds: 1,
  prices: {},
});

const noSandbox: SandboxPort = {
  run: async () => {
    throw new Error("no sandbox in this test");
  },
};

/**
 * The in-memory ports every test system starts from: a clock moved by hand, an
 * item store that counts its calls, blobs and a queue on that clock, a scripted
 * LLM (with the test LLM config) and no sandbox.
 */
export function memoryPorts(llm: FakeLlm = new FakeLlm()) {
  const clock = new ManualClock();
  const ports = {
    clock,
    items: countingStore(new MemoryItemStore()),
    blobs: new MemoryBlobs({ clock }),
    queue: new MemoryQueue({ clock }),
    llm,
    sandbox: noSandbox,
  };
  return { ports, llmConfig: LLM_CONFIG };
}

export function memorySystem(
  /**
   * `traces`: each step's LLM calls store their traces, kept `traces` days.
   * `tools`: built-ins of the system beside the registry's (the knowledge tools over a scripted search).
   */
  options: {
    llm?: FakeLlm;
    maxPlanUpdates?: number;
    traces?: number;
    tools?: Tool[];
    /** False: no LLM is configured (a failed step is not followed by a plan update). */
    llmConfigured?: boolean;
  } = {},
) {
  const { ports } = memoryPorts(options.llm);
  const { clock, items, blobs, queue, llm } = ports;
  const tools = new Map([
    ...builtinTools(),
    ...(options.tools ?? []).map((tool) => [tool.name, tool] as const),
  ]);
  const stores = createStores(items);
  const store = stores.tasks;
  const { namespaces, registry } = createNamespaces(stores.namespaces, clock, tools.values(), [
    codeToolSource,
  ]);
  const presenter = new Presenter(blobs);
  // Tasks and branches as every system wires them, without quotas or webhooks.
  const { tasks, branches } = wireTaskServices({
    ...ports,
    store,
    namespaces,
    presenter,
    tools,
    checkWebhookUrl: () => undefined,
  });
  const lifecycle = taskLifecycle(store, clock);
  const step: StepDeps = {
    store,
    held: stores.heldResults,
    blobs,
    queue,
    clock,
    sandbox: ports.sandbox,
    llm: (budget, traceTo) =>
      createLlmSession({
        port: llm,
        config: LLM_CONFIG,
        budget,
        now: clock.now,
        sleep: async () => undefined,
        ...(options.traces && traceTo ? { trace: { blobs, prefix: traceTo } } : {}),
      }),
    tools,
    registry,
    planner: lazyPlanner({ clock, repairRounds: 2 }),
    log: silentLog,
    // The operator's opt-in, as a developer gives it (tests call servers on loopback).
    outbound: LOOPBACK_OPENED,
    maxPlanUpdates: options.maxPlanUpdates ?? 3,
    ...(options.llmConfigured === undefined ? {} : { llmConfigured: options.llmConfigured }),
    onStart: lifecycle.onStart,
    onTerminal: lifecycle.onTerminal,
  };
  /** The last error of each message that failed, for the dead-letter reason. */
  const lastErrors = new Map<string, string>();
  let deadSeen = 0;
  /**
   * Delivers queued steps until the queue is empty. A step that keeps failing
   * lands in the queue's dead letters after `maxReceiveCount` deliveries; as the
   * DLQ consumer does in the stacks (`functions/src/dlq-handler.ts`), its branch
   * then ends `failed` with the last error, so no task is left `running`.
   */
  const drain = async () => {
    const result = await queue.drain(async (message) => {
      try {
        const body = queuedStep(message.body);
        await (body.kind === "member" ? runMember(step, body) : runStep(step, body));
      } catch (error) {
        lastErrors.set(message.messageId, error instanceof Error ? error.message : String(error));
        throw error;
      }
    });
    for (const dead of queue.deadLetters.slice(deadSeen)) {
      const body = queuedStep(dead.body);
      const m = body.kind === "member" ? memberStep(body) : body;
      const reason = deadLetterReason(m, dead.receiveCount - 1, lastErrors.get(dead.messageId));
      const branch = await endDeadLetteredBranch(store, m, reason, clock.now());
      if (branch) await lifecycle.onTerminal(branch);
    }
    deadSeen = queue.deadLetters.length;
    return result;
  };
  const llmTraces = new LlmTraceService({
    store,
    blobs,
    clock,
    tasks,
    retentionDays: options.traces ?? 0,
  });
  return {
    clock,
    items,
    blobs,
    queue,
    llm,
    store,
    stores,
    namespaces,
    tasks,
    branches,
    llmTraces,
    step,
    drain,
  };
}

/** A queued step or member message, as the worker reads it; anything else is a test's mistake. */
function queuedStep(body: string): StepMessage | MemberMessage {
  const parsed = parseQueueMessage(body);
  if (parsed.ok && (parsed.message.kind === "step" || parsed.message.kind === "member")) {
    return parsed.message;
  }
  throw new Error(`not a step or member message: ${body.slice(0, 200)}`);
}

/**
 * What the step function needs from the outside world, all through ports, so that
 * the same step runs in unit tests (memory adapters), locally (emulators) and on AWS.
 */

import type { FileReader } from "../files/file-refs";
import type { CallWatch } from "../llm/call-watch";
import type { LlmBudget, LlmSession, SpendMeter, TokenSink, TokenTarget } from "../llm/types";
import type { OutboundPolicy } from "../net/outbound-policy";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { Queue } from "../ports/queue";
import type { SandboxPort } from "../ports/sandbox";
import type { Tracer } from "../ports/tracer";
import type { WakePort } from "../ports/wake";
import type { HeldResultStore } from "../store/held-result-store";
import type { BranchRecord, CommitRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import type { ToolRegistry } from "../tools/registry";
import type { Tool } from "../tools/tool";
import type { Evaluator } from "./evaluator-port";
import type { Planner } from "./planner-port";

/** Hooks that run when a branch reaches a terminal status (webhooks, evaluation). */
export type TerminalHook = (branch: BranchRecord) => Promise<void>;

export interface StepDeps {
  store: TaskStore;
  /** The held results of parallel groups' members (`vm/group.ts`). */
  held: HeldResultStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  sandbox: SandboxPort;
  /** The tenants' uploaded files, read by `{"$file": id}` references; none: such a reference is not found. */
  files?: FileReader;
  /**
   * A new LLM session for one step, limited to what the branch may still spend;
   * `traceTo` is the blob prefix of the task's LLM traces (`llmTracePrefix`);
   * `tokens` receives the text of the calls that stream (llm_generate, the planner).
   */
  llm: (
    budget: LlmBudget,
    traceTo?: string,
    giveUpAt?: number,
    tokens?: TokenSink,
    /** Told of each call's attempts as they start and end: the call in flight (`vm/in-flight.ts`). */
    watch?: CallWatch,
  ) => LlmSession;
  /** The tenant's month as the branch's calls spend it (`QuotaService`); none: only the branch's budget. */
  meter?: (tenant: string, taskId: string, branch: string) => SpendMeter;
  /** The sink of a step's streamed text (`service/token-relay.ts`); none: nothing streams. */
  tokens?: (target: TokenTarget) => TokenSink;
  /** Built-in tools. */
  tools: ReadonlyMap<string, Tool>;
  /** Every tool of a namespace (built-in, code, HTTP, MCP): for plans, replans and calls. */
  registry: ToolRegistry;
  planner: Planner;
  /** Judges final answers of branches whose task asked for evaluation; none: no evaluation. */
  evaluator?: Evaluator;
  log: Log;
  /** What outgoing requests of tools may reach (the operator's setting, the stack's own ports). */
  outbound: OutboundPolicy;
  /** How long an LLM that cannot be reached is retried before the branch fails (`vm/retrying.ts`); default a minute. */
  llmUnreachableMs?: number;
  /** Plan updates allowed per branch after step errors. */
  maxPlanUpdates: number;
  /** False when no LLM is configured: a failed step ends its branch with its first cause, no plan update is tried. */
  llmConfigured?: boolean;
  /** Runs after the first commit of a task (its `main` plan). */
  onStart?: TerminalHook;
  /** Runs after a branch reaches a terminal status. */
  onTerminal?: TerminalHook;
  /** Wakes beyond the queue's delay (EventBridge Scheduler, the local scheduler); none: the queue's wake hides itself again until due. */
  wakes?: WakePort;
  /** Runs when a branch begins to wait (and again on a repeated message): `task.waiting`, status, slot. */
  onWaiting?: TerminalHook;
  /** When a wait is due: claims a running slot (true), or queues the branch for one (false). */
  resumeSlot?: (branch: BranchRecord) => Promise<boolean>;
  /** Runs when a branch that waited commits again and runs on: the task's status. */
  onResume?: TerminalHook;
  /** Observes every commit that became a head (metrics); must not throw. */
  onCommit?: (commit: CommitRecord, branch: BranchRecord) => void;
  /** Spans of steps and tool calls (`ports/tracer.ts`); absent: none. */
  tracer?: Tracer;
}

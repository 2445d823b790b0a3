/**
 * Reading an LLM call's trace (`llm/trace.ts`): the call `n` of a commit, as
 * `GET /v1/tasks/{task_id}/commits/{commit_id}/llm-calls/{n}` answers it. Every
 * way of not finding it is a 404 that says which part was not found and why.
 */
import * as z from "zod";
import { NotFoundError, StackVMError } from "../errors";
import { type LlmTrace, llmTracePrefix, traceExpired } from "../llm/trace";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import { LlmPurpose } from "../record-fields";
import type { TaskStore } from "../store/task-store";
import type { TaskReads } from "./task-reads";

const Message = z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() });

/** One LLM call's whole request and answer, as the API shows it. */
export const LlmCallTrace = z.object({
  commit_id: z.string(),
  n: z.number().int(),
  purpose: LlmPurpose,
  model: z.string(),
  created_at: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number(),
  latency_ms: z.number(),
  request: z.object({
    model: z.string(),
    messages: z.array(Message),
    response_format: z.record(z.string(), z.unknown()).optional(),
    temperature: z.number().optional(),
    max_tokens: z.number().int().optional(),
  }),
  response: z.object({
    text: z.string(),
    json: z.unknown().optional(),
    finish_reason: z.string().nullable(),
    reasoning: z.string().optional(),
  }),
  repair_round: z.number().int(),
  rejected: z.array(z.string()).optional(),
  attempts: z.array(
    z.object({
      attempt: z.number().int(),
      latency_ms: z.number(),
      error: z.string().optional(),
    }),
  ),
});
export type LlmCallTrace = z.infer<typeof LlmCallTrace>;

export interface LlmTraceServiceDeps {
  store: TaskStore;
  blobs: Blobs;
  clock: Clock;
  tasks: Pick<TaskReads, "record">;
  /** Days traces are kept (0: none are); an older one reads as expired even before S3 deletes it. */
  retentionDays: number;
}

export class LlmTraceService {
  constructor(private readonly deps: LlmTraceServiceDeps) {}

  /** The trace of call `n` (from 0, in the order of the commit's `llm_calls`). */
  async read(tenant: string, taskId: string, commitId: string, n: number): Promise<LlmCallTrace> {
    const task = await this.deps.tasks.record(tenant, taskId);
    const commit = await this.deps.store.getCommit(task.tenant_id, task.task_id, commitId);
    if (!commit) throw new NotFoundError("commit", commitId);
    const calls = commit.llm_calls;
    const call = calls[n];
    if (!call) {
      throw notFound(
        "llm_call_not_found",
        calls.length === 0
          ? `commit ${commitId} made no LLM calls`
          : `commit ${commitId} made ${calls.length} LLM call(s): n goes from 0 to ${calls.length - 1}`,
      );
    }
    const gone = `LLM call ${n} of commit ${commitId} (${call.purpose})`;
    if (!call.trace) {
      throw notFound(
        "llm_trace_not_kept",
        call.purpose === "embedding"
          ? `${gone} keeps no trace: embedding calls send only the texts to embed`
          : call.purpose === "web_search"
            ? `${gone} keeps no trace: a web search's query and results are the step's own`
            : `${gone} keeps no trace: traces were turned off (STACKVM_LLM_TRACE_RETENTION_DAYS=0) or the call is older than traces`,
      );
    }
    const days = this.deps.retentionDays;
    const expired = notFound(
      "llm_trace_expired",
      days === 0
        ? `${gone} has no trace any more: traces are no longer kept (STACKVM_LLM_TRACE_RETENTION_DAYS=0)`
        : `${gone} has no trace any more: traces are kept ${days} day(s) (STACKVM_LLM_TRACE_RETENTION_DAYS)`,
    );
    const bytes = await this.deps.blobs.get(llmTracePrefix(tenant, taskId), call.trace);
    if (!bytes) throw expired;
    const trace = JSON.parse(new TextDecoder().decode(bytes)) as LlmTrace;
    if (traceExpired(trace.created_at, this.deps.clock.now(), days)) {
      throw expired;
    }
    return {
      commit_id: commit.commit_id,
      n,
      purpose: call.purpose,
      model: call.model,
      created_at: trace.created_at,
      input_tokens: call.input_tokens,
      output_tokens: call.output_tokens,
      cost_usd: call.cost_usd,
      latency_ms: call.latency_ms,
      request: trace.request,
      response: trace.response,
      repair_round: trace.repair_round,
      ...(trace.rejected ? { rejected: trace.rejected } : {}),
      attempts: trace.attempts,
    };
  }
}

function notFound(code: string, message: string): StackVMError {
  return new StackVMError("not_found", code, message);
}

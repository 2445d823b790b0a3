/**
 * One logical LLM call of a session: the budget checked, the output limit fitted
 * to the context, the port called with retries (each attempt streamed to the
 * token sink and told to the call watch when asked), and the call recorded
 * (tokens, cost, latency, attempts), a failed one too. With a trace sink, the
 * call's whole request and answer is stored as one blob and named in its record.
 */
import type { LlmCall, LlmPurpose } from "../model";
import type { LlmRequest, LlmResponse } from "../ports/llm";
import type { Parsed } from "./answers";
import { contextLookup, fitOutput, type KnownContext, outputLimit } from "./context-fit";
import { costUsd } from "./cost";
import { DEFAULT_RETRY_DELAYS, withRetries } from "./retry";
import { checkSessionBudget } from "./session-budget";
import type { LlmSessionDeps } from "./session-deps";
import { buildTrace, storeTrace, type TraceAttempt } from "./trace";

/** A request as the session builds it: the port's timeout is added per attempt. */
export type CallRequest = Omit<LlmRequest, "timeoutMs">;

/** A call made, its record not yet given its trace. */
export interface Made {
  response: LlmResponse;
  /** The request as sent: with the output limit the call was given. */
  request: CallRequest;
  record: LlmCall;
  attempts: TraceAttempt[];
  createdAt: string;
}

/** The calls of one session, and the record of each (`calls`). */
export interface Caller {
  /** A record of every call made, failed ones included. */
  calls: LlmCall[];
  /** Throws `budget_exceeded` when the calls made spent what the session had left. */
  checkBudget(): void;
  /** One call: budget, retries, record. A call that fails in every attempt is recorded too. */
  call(purpose: LlmPurpose, request: CallRequest, stream?: boolean): Promise<Made>;
  /** Stores the call's trace (one blob write) and names it in the call's record. */
  traced(
    made: Made,
    request: CallRequest,
    repairRound: number,
    json?: Parsed<unknown>,
  ): Promise<void>;
}

/**
 * The caller of a session over `deps`, recording into `calls` (the session's own record).
 *
 * @example
 * const caller = createCaller({ port, config, budget: {} });
 * const made = await caller.call("llm_generate", { model, messages });
 */
export function createCaller(deps: LlmSessionDeps, calls: LlmCall[] = []): Caller {
  const { port, config, budget } = deps;
  const now = deps.now ?? Date.now;
  const policy = {
    ...DEFAULT_RETRY_DELAYS,
    maxAttempts: config.maxAttempts,
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))),
    random: deps.random ?? Math.random,
    ...(deps.giveUpAt === undefined ? {} : { giveUpAt: deps.giveUpAt, now }),
  };
  const contextOf = contextLookup(port, config);
  const checkBudget = () => checkSessionBudget(budget, calls);

  async function traced(
    made: Made,
    request: CallRequest,
    repairRound: number,
    json?: Parsed<unknown>,
  ): Promise<void> {
    if (!deps.trace) return;
    const trace = buildTrace({
      purpose: made.record.purpose,
      request,
      response: made.response,
      createdAt: made.createdAt,
      repairRound,
      attempts: made.attempts,
      ...(json ? { json } : {}),
    });
    made.record.trace = await storeTrace(deps.trace, trace);
  }

  /**
   * The output limit that fits the prompt in the model's context. A prompt whose
   * (high) estimate does not fit a context the server reported earlier asks the
   * server again before it fails (a server restarted with a larger context is
   * used at once), then has the server count it, where it can (llama.cpp): the
   * real count is some 30% below the estimate, and may fit.
   */
  async function fitted(purpose: LlmPurpose, request: CallRequest): Promise<number> {
    const fit = (context: KnownContext | undefined, counted?: number) =>
      fitOutput({
        purpose,
        messages: request.messages,
        limit: request.maxOutputTokens ?? outputLimit(config, purpose),
        context,
        counted,
      });
    let known = await contextOf(request.model, { role: request.role });
    try {
      return fit(known);
    } catch (error) {
      if (known?.source !== "the server") throw error;
      const latest = await contextOf(request.model, { role: request.role, fresh: true });
      if (latest !== undefined && latest.tokens !== known.tokens) {
        try {
          return fit(latest);
        } catch {
          // Measured against the context the server gives now: counted below.
        }
      }
      known = latest ?? known;
      const counted = await port
        .countTokens?.(request.model, request.messages, request.role)
        .catch(() => undefined);
      if (counted === undefined) throw error;
      return fit(known, counted);
    }
  }

  async function call(purpose: LlmPurpose, request: CallRequest, stream = false): Promise<Made> {
    checkBudget();
    await budget.meter?.check();
    // Every call is bounded: its purpose's limit, lowered to the room its prompt leaves.
    request = { ...request, maxOutputTokens: await fitted(purpose, request) };
    const started = now();
    const tries: TraceAttempt[] = [];
    const sink = stream ? deps.tokens : undefined;
    const watch = deps.watch;
    let tried = 0;
    // Pieces of streamed answers that were cut off (a timeout mid-answer): the server
    // wrote them, and reports no usage for an attempt that failed.
    let cutPieces = 0;
    // Each attempt is timed only for a trace or a watch: without them, the call stays as it was.
    const timed = deps.trace !== undefined || watch !== undefined;
    const complete = async (attempt: number) => {
      tried = attempt;
      const at = timed ? now() : 0;
      watch?.attempt({ purpose, model: request.model, attempt, startedAt: at });
      // Only a call asked to stream streams: a watch alone changes nothing on the wire.
      let pieces = 0;
      const onDelta =
        stream && (sink || watch)
          ? (text: string) => {
              pieces++;
              sink?.delta(purpose, text);
              watch?.delta();
            }
          : undefined;
      try {
        const answer = await port.complete({
          ...request,
          timeoutMs: config.timeoutMs,
          ...(onDelta ? { onDelta } : {}),
        });
        if (timed) tries.push({ attempt, latency_ms: now() - at });
        return answer;
      } catch (error) {
        cutPieces += pieces;
        if (timed) tries.push({ attempt, latency_ms: now() - at, error: errorText(error) });
        throw error;
      } finally {
        // Each attempt's text is out before the next attempt (or the commit) follows it.
        if (sink) await sink.flush();
      }
    };
    let response: LlmResponse;
    let attempts: number;
    try {
      ({ value: response, attempts } = await withRetries(complete, policy));
    } catch (error) {
      // The server refused the prompt for its context: what it reports now serves the next call
      // (a server restarted with a smaller one is measured against it, not refused again).
      if ((error as { code?: unknown }).code === "llm_context_exceeded") {
        await contextOf(request.model, { role: request.role, fresh: true }).catch(() => undefined);
      }
      // The attempts that failed are calls made too: the commit, the trace and `usage` show them.
      const record: LlmCall = {
        purpose,
        model: request.model,
        input_tokens: 0,
        output_tokens: cutPieces,
        cost_usd: costUsd(request.model, 0, cutPieces, config.prices),
        latency_ms: now() - started,
        attempts: Math.max(1, tried),
        error: errorOf(error),
      };
      calls.push(record);
      if (record.output_tokens > 0) {
        await budget.meter?.spend(record.output_tokens, record.cost_usd).catch(() => undefined);
      }
      await traced(
        {
          response: { text: "", model: request.model, inputTokens: 0, outputTokens: 0 },
          record,
          attempts: tries,
          createdAt: new Date(started).toISOString(),
          request,
        },
        request,
        0,
      ).catch(() => undefined);
      throw error;
    } finally {
      watch?.done();
    }
    const record: LlmCall = {
      purpose,
      model: response.model || request.model,
      input_tokens: response.inputTokens,
      // The answer's tokens, and those of streamed answers cut off before it (one a piece).
      output_tokens: response.outputTokens + cutPieces,
      // Priced by the configured name: servers report dated snapshots, which `costUsd` maps back.
      cost_usd: costUsd(
        request.model,
        response.inputTokens,
        response.outputTokens + cutPieces,
        config.prices,
      ),
      // The whole call as the step felt it: failed attempts and backoff included.
      latency_ms: now() - started,
      attempts,
    };
    calls.push(record);
    await budget.meter?.spend(record.input_tokens + record.output_tokens, record.cost_usd);
    return {
      response,
      record,
      attempts: tries,
      createdAt: new Date(started).toISOString(),
      request,
    };
  }

  return { calls, checkBudget, call, traced };
}

/** The message of what a call threw, for its trace and for notes on it. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The code and message of a call that failed, for its record (`LlmCall.error`). */
function errorOf(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return { code: typeof code === "string" ? code : "error", message: errorText(error) };
}

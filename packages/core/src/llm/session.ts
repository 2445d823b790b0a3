/**
 * `createLlmSession`: the LLM layer of one step over the llm port. Each logical
 * call goes: budget check, port call with retries, record (tokens, cost, latency,
 * attempts), parse; an answer that does not parse or validate goes back to the
 * model with its errors, at most `repairRounds` times, each round a new call with
 * its own budget check and record. With a trace sink, each call's whole request
 * and answer is stored as one blob (`trace.ts`) and named in its record.
 */
import type * as z from "zod";
import { BudgetExceededError } from "../errors";
import type { LlmCall, LlmPurpose } from "../model";
import type { LlmPort, LlmRequest, LlmResponse } from "../ports/llm";
import {
  cutOff,
  cutOffError,
  invalidOutput,
  isCutOff,
  type Parsed,
  parseJson,
  refusesSchema,
  validate,
} from "./answers";
import type { CallWatch } from "./call-watch";
import { DEFAULT_OUTPUT_TOKENS, type LlmConfig } from "./config";
import { fitOutput, type KnownContext, outputPurposeOf } from "./context-fit";
import { costUsd } from "./cost";
import { repairExcerpt } from "./excerpt";
import { splitThinking } from "./extract-json";
import { toLlmJsonSchema } from "./json-schema";
import { DEFAULT_RETRY_DELAYS, withRetries } from "./retry";
import { buildTrace, storeTrace, type TraceAttempt, type TraceSink } from "./trace";
import type {
  GenerateOptions,
  JsonOptions,
  LlmBudget,
  LlmRole,
  LlmSession,
  TokenSink,
} from "./types";

export interface LlmSessionDeps {
  port: LlmPort;
  config: LlmConfig;
  /** What the branch may still spend when the step starts; this session's calls are subtracted. */
  budget: LlmBudget;
  /** Waits between retries; inject a fake in tests. */
  sleep?: (ms: number) => Promise<void>;
  /** In [0, 1), for the backoff jitter. */
  random?: () => number;
  /** Milliseconds, for `latency_ms`. */
  now?: () => number;
  /** No retry is started past this moment (epoch ms): the queue tries the step again instead. */
  giveUpAt?: number;
  /** Where each call's prompt and answer go; none: no traces are kept. */
  trace?: TraceSink;
  /** Where calls asked with `stream: true` send their text as it is written; none: nothing streams. */
  tokens?: TokenSink;
  /** Told of each attempt as it starts and of each piece of its answer: the call in flight (`CallWatch`). */
  watch?: CallWatch;
}

/** A call made, its record not yet given its trace. */
interface Made {
  response: LlmResponse;
  /** The request as sent: with the output limit the call was given. */
  request: Omit<LlmRequest, "timeoutMs">;
  record: LlmCall;
  attempts: TraceAttempt[];
  createdAt: string;
}

/**
 * A session for one step. `calls` collects a record of every completed call.
 *
 * @example
 * const llm = createLlmSession({ port, config: LlmConfig.parse({ models }), budget: { tokensLeft: 5_000 } });
 * const verdict = await llm.json({ purpose: "jmp_condition", role: "reason", schemaName: "jmp_condition", schema: JmpVerdict, messages });
 * commit.llm_calls = llm.calls;
 */
export function createLlmSession(deps: LlmSessionDeps): LlmSession {
  const { port, config, budget } = deps;
  const now = deps.now ?? Date.now;
  const calls: LlmCall[] = [];
  const policy = {
    ...DEFAULT_RETRY_DELAYS,
    maxAttempts: config.maxAttempts,
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))),
    random: deps.random ?? Math.random,
    ...(deps.giveUpAt === undefined ? {} : { giveUpAt: deps.giveUpAt, now }),
  };

  // Asked of the server once per model and session: a step makes few calls.
  const contexts = new Map<string, Promise<KnownContext | undefined>>();
  function contextOf(model: string): Promise<KnownContext | undefined> {
    let known = contexts.get(model);
    if (known === undefined) {
      known = (port.contextTokens?.(model) ?? Promise.resolve(undefined))
        .catch(() => undefined)
        .then((tokens) => {
          if (tokens !== undefined) return { tokens, source: "the server" };
          if (config.contextTokens !== undefined) {
            return { tokens: config.contextTokens, source: "LLM_CONTEXT_TOKENS" };
          }
          return undefined;
        });
      contexts.set(model, known);
    }
    return known;
  }

  function checkBudget(): void {
    const spentTokens = calls.reduce((sum, c) => sum + c.input_tokens + c.output_tokens, 0);
    const spentCost = calls.reduce((sum, c) => sum + c.cost_usd, 0);
    if (budget.tokensLeft !== undefined && budget.tokensLeft - spentTokens <= 0) {
      throw tokensSpent(budget, budget.tokensLeft - spentTokens);
    }
    if (budget.costLeftUsd !== undefined && budget.costLeftUsd - spentCost <= 0) {
      throw costSpent(budget, budget.costLeftUsd - spentCost);
    }
  }

  /** One call: budget, retries, record. A call that fails in every attempt is recorded too. */
  async function call(
    purpose: LlmPurpose,
    request: Omit<LlmRequest, "timeoutMs">,
    stream = false,
  ): Promise<Made> {
    checkBudget();
    await budget.meter?.check();
    // Every call is bounded: its purpose's limit, lowered to the room its prompt leaves.
    request = {
      ...request,
      maxOutputTokens: fitOutput({
        purpose,
        messages: request.messages,
        limit: request.maxOutputTokens ?? outputLimit(config, purpose),
        context: await contextOf(request.model),
      }),
    };
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

  /** Stores the call's trace (one blob write) and names it in the call's record. */
  async function traced(
    made: Made,
    request: Omit<LlmRequest, "timeoutMs">,
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

  /** Calls until `parse` accepts the answer or the repair rounds run out. */
  async function callUntilValid<T>(
    purpose: LlmPurpose,
    request: Omit<LlmRequest, "timeoutMs">,
    parse: (text: string) => Parsed<T>,
    what: string,
    stream = false,
    cutOffHint = "write a shorter answer",
    notes: TraceAttempt[] = [],
  ): Promise<{ response: LlmResponse; value: T; reasoning?: string }> {
    let messages = request.messages;
    for (let round = 0; ; round++) {
      let made: Made;
      try {
        made = await call(purpose, { ...request, messages }, stream);
      } catch (error) {
        // A server that could not read its own cut answer (llama.cpp's 500) said as
        // much as a cut answer: the call is on record; the repair asks for less.
        if (!isErrorCode(error, "llm_output_cut_off") || round >= config.repairRounds) throw error;
        const at = request.maxOutputTokens ?? outputLimit(config, purpose);
        messages = [...messages, { role: "user", content: cutOffRepair(at, cutOffHint, what) }];
        continue;
      }
      if (round === 0) made.attempts.unshift(...notes);
      const { response } = made;
      // A cut answer is not parsed: a fragment of it may parse, and its errors mislead.
      const parsed = isCutOff(response)
        ? cutOff<T>(response, made.request.maxOutputTokens)
        : parse(response.text);
      await traced(made, made.request, round, parsed);
      if (parsed.ok) {
        // The server's own reasoning field, else the `<think>` the answer carried.
        const reasoning = response.reasoning ?? parsed.thinking;
        return { response, value: parsed.value, ...(reasoning === undefined ? {} : { reasoning }) };
      }
      if (round >= config.repairRounds)
        throw invalidOutput(purpose, what, round + 1, parsed, response);
      messages = [
        ...messages,
        // The problems and the start of the answer: the whole would grow every round.
        { role: "assistant", content: repairExcerpt(response.text) },
        {
          role: "user",
          content:
            parsed.cutOff === undefined
              ? repairPrompt(what, parsed.errors)
              : cutOffRepair(parsed.cutOff, cutOffHint, what),
        },
      ];
    }
  }

  const modelFor = (role: LlmRole | undefined) => config.models[role ?? "default"];

  return {
    calls,
    checkBudget,

    async generate(options: GenerateOptions) {
      const request = {
        model: modelFor(options.role),
        messages: options.messages,
        maxOutputTokens: options.maxOutputTokens,
        temperature: options.temperature,
      };
      if (!options.json) {
        const made = await call(options.purpose, request, options.stream);
        await traced(made, made.request, 0);
        if (isCutOff(made.response)) {
          throw cutOffError(options.purpose, made.response, made.request.maxOutputTokens, 1);
        }
        // A reasoning model's `<think>` is not part of the text it was asked for.
        const { thinking, answer } = splitThinking(made.response.text);
        const reasoning = made.response.reasoning ?? thinking;
        const text = thinking === undefined ? made.response.text : answer.trim();
        return reasoning === undefined ? { text } : { text, reasoning };
      }
      const { response, value, reasoning } = await callUntilValid(
        options.purpose,
        // A JSON Schema the caller has goes to the server as one; else any JSON object.
        options.jsonSchema === undefined
          ? { ...request, jsonObject: true }
          : { ...request, jsonSchema: options.jsonSchema },
        parseJson,
        "JSON value",
        options.stream,
      );
      return reasoning === undefined
        ? { text: response.text, value }
        : { text: response.text, value, reasoning };
    },

    async json<T>(options: JsonOptions<T>): Promise<T> {
      const ask = (schema: Record<string, unknown>, notes?: TraceAttempt[]) =>
        callUntilValid(
          options.purpose,
          {
            model: modelFor(options.role),
            messages: options.messages,
            jsonSchema: { name: options.schemaName, schema },
            maxOutputTokens: options.maxOutputTokens,
            temperature: options.temperature,
          },
          (text) => validate(text, options.schema),
          `'${options.schemaName}' JSON`,
          options.stream,
          options.cutOffHint,
          notes,
        );
      let answer: Awaited<ReturnType<typeof ask>>;
      if (options.wireSchema === undefined) {
        answer = await ask(jsonSchemaOf(options.schema));
      } else {
        try {
          answer = await ask(options.wireSchema);
        } catch (error) {
          if (!refusesSchema(error)) throw error;
          // A server that cannot take the precise schema still gets one it can.
          answer = await ask(jsonSchemaOf(options.schema), [
            {
              attempt: 0,
              latency_ms: 0,
              error: `the server refused the precise '${options.schemaName}' schema, so the loose one was sent: ${errorText(error)}`,
            },
          ]);
        }
      }
      if (answer.reasoning !== undefined) options.onReasoning?.(answer.reasoning);
      return answer.value;
    },
  };
}

const schemaCache = new WeakMap<z.ZodType, Record<string, unknown>>();

/** Generated once per schema: the same few schemas serve every step of a warm worker. */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  let json = schemaCache.get(schema);
  if (json === undefined) {
    json = toLlmJsonSchema(schema);
    schemaCache.set(schema, json);
  }
  return json;
}

/** The purpose's limit; a config built by hand (not parsed) has the defaults. */
function outputLimit(config: LlmConfig, purpose: LlmPurpose): number {
  const key = outputPurposeOf(purpose);
  return (
    (config.outputTokens as Partial<LlmConfig["outputTokens"]> | undefined)?.[key] ??
    DEFAULT_OUTPUT_TOKENS[key]
  );
}

/** The repair prompt after an answer cut off at `at` tokens. */
function cutOffRepair(at: number, hint: string, what: string): string {
  return `Your answer was cut off at ${at} tokens: ${hint}. Answer the whole ${what} again, complete.`;
}

/** True when `error` carries the stable `code` (a `StepError` or one like it). */
function isErrorCode(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | null)?.code === code;
}

/** The code and message of a call that failed, for its record (`LlmCall.error`). */
function errorOf(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return { code: typeof code === "string" ? code : "error", message: errorText(error) };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function repairPrompt(what: string, errors: string[]): string {
  return [
    `Your answer is not valid ${what}:`,
    ...errors.map((e) => `- ${e}`),
    `Answer again with only the corrected ${what}, no other text.`,
  ].join("\n");
}

const count = (n: number) => Math.round(n).toLocaleString("en-US");
const usd = (n: number) => `$${n.toFixed(4)}`;

function tokensSpent(budget: LlmBudget, left: number): BudgetExceededError {
  const details = { budget: "max_tokens", tokens_left: left, max_tokens: budget.maxTokens };
  if (budget.maxTokens === undefined) {
    return new BudgetExceededError(
      `max_tokens budget spent: ${left === 0 ? "no tokens left" : `${count(-left)} tokens over`}; raise budget.max_tokens to go on`,
      details,
    );
  }
  const used = budget.maxTokens - left;
  return new BudgetExceededError(
    `max_tokens budget spent: ${count(used)} of ${count(budget.maxTokens)} tokens used; raise budget.max_tokens to go on`,
    details,
  );
}

function costSpent(budget: LlmBudget, left: number): BudgetExceededError {
  const details = { budget: "max_cost_usd", cost_left_usd: left, max_cost_usd: budget.maxCostUsd };
  if (budget.maxCostUsd === undefined) {
    return new BudgetExceededError(
      `max_cost_usd budget spent: ${left === 0 ? "nothing left" : `${usd(-left)} over`}; raise budget.max_cost_usd to go on`,
      details,
    );
  }
  const used = budget.maxCostUsd - left;
  return new BudgetExceededError(
    `max_cost_usd budget spent: ${usd(used)} of ${usd(budget.maxCostUsd)} used; raise budget.max_cost_usd to go on`,
    details,
  );
}

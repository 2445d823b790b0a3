/**
 * What a session's `generate` and `json` do, loaded by the first step that
 * calls the LLM (session.ts): each logical call goes budget check, port call
 * with retries, record (tokens, cost, latency, attempts), parse (`call.ts`); an
 * answer that does not parse or validate goes back to the model with its
 * errors, at most `repairRounds` times, each round a new call with its own
 * budget check and record (`repair.ts`). With a trace sink, each call's whole
 * request and answer is stored as one blob (`trace.ts`) and named in its record.
 */
import type * as z from "zod";
import type { LlmCall } from "../model";
import { cutOffError, isCutOff, parseJson, refusesSchema, validate } from "./answers";
import { createCaller, errorText } from "./call";
import { splitThinking } from "./extract-json";
import { toLlmJsonSchema } from "./json-schema";
import { callUntilValid } from "./repair";
import type { LlmSessionDeps } from "./session-deps";
import type { TraceAttempt } from "./trace";
import type { GenerateOptions, JsonOptions, LlmRole, LlmSession } from "./types";

/** A session's calls to the LLM; `calls` is the session's record, which every call appends to. */
export type SessionCalls = Pick<LlmSession, "generate" | "json">;

/**
 * The calls of a session over `deps`, recording into `calls`.
 *
 * @example
 * const { generate } = createSessionCalls(deps, calls);
 */
export function createSessionCalls(deps: LlmSessionDeps, calls: LlmCall[]): SessionCalls {
  const { config } = deps;
  const caller = createCaller(deps, calls);
  const modelFor = (role: LlmRole | undefined) => config.models[role ?? "default"];
  // The caller's temperature, else the role's (`LLM_TEMPERATURE`, `REASON_LLM_TEMPERATURE`, ...).
  const temperatureFor = (role: LlmRole | undefined, asked: number | undefined) =>
    asked ?? config.temperatures?.[role ?? "default"];

  return {
    async generate(options: GenerateOptions) {
      const request = {
        model: modelFor(options.role),
        role: options.role ?? "default",
        messages: options.messages,
        maxOutputTokens: options.maxOutputTokens,
        temperature: temperatureFor(options.role, options.temperature),
      };
      if (!options.json) {
        const made = await caller.call(options.purpose, request, options.stream);
        await caller.traced(made, made.request, 0);
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
        caller,
        config,
        options.purpose,
        // A JSON Schema the caller has goes to the server as one; else any JSON object.
        options.jsonSchema === undefined
          ? { ...request, jsonObject: true }
          : { ...request, jsonSchema: options.jsonSchema },
        { parse: parseJson, what: "JSON value", stream: options.stream },
      );
      return reasoning === undefined
        ? { text: response.text, value }
        : { text: response.text, value, reasoning };
    },

    async json<T>(options: JsonOptions<T>): Promise<T> {
      const ask = (schema: Record<string, unknown>, notes?: TraceAttempt[]) =>
        callUntilValid(
          caller,
          config,
          options.purpose,
          {
            model: modelFor(options.role),
            role: options.role ?? "default",
            messages: options.messages,
            jsonSchema: { name: options.schemaName, schema },
            maxOutputTokens: options.maxOutputTokens,
            temperature: temperatureFor(options.role, options.temperature),
          },
          {
            parse: (text) => validate(text, options.schema),
            what: `'${options.schemaName}' JSON`,
            stream: options.stream,
            cutOffHint: options.cutOffHint,
            notes,
          },
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

/**
 * The llm port over Amazon Bedrock's Converse API (`@aws-sdk/client-bedrock-runtime`),
 * signed with the function's IAM role: no outside API key. The client does not
 * retry (`maxAttempts: 1`): retries, repairs, budgets and costs are core's, as
 * for `OpenAiLlm`.
 *
 * A structured answer is asked for through tool use, which every Converse model
 * with tools understands (Claude, Nova, Llama 3.1 and later, Mistral): one tool
 * whose input schema is the answer's JSON schema, forced by `toolChoice`; its
 * input is the answer. A model that refuses a forced tool gets the tool offered
 * instead, and the system prompt asks it to call it; an answer given as text is
 * parsed (and repaired) by core as any other. Converse's own JSON-schema output
 * (`outputConfig.textFormat`) is not used: few models take it yet, and the
 * others refuse the request.
 *
 * A request with `onDelta` goes through `ConverseStream` instead: the same input,
 * text (and a forced tool's JSON input) handed over as each delta arrives, and
 * the events folded back into Converse's output, so that the rest reads alike.
 */
import {
  BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandInput,
  type ConverseCommandOutput,
  ConverseStreamCommand,
  type ConverseStreamCommandOutput,
  type ConverseStreamOutput,
  type Message,
  type SystemContentBlock,
} from "@aws-sdk/client-bedrock-runtime";
import type { LlmMessage, LlmPort, LlmRequest, LlmResponse } from "@stackvm/core";
import { RetryableError, StepError } from "@stackvm/core";
import { translateBedrockError } from "./bedrock-errors";
import { clientConfig } from "./client-config";

export interface BedrockOptions {
  /** `BEDROCK_REGION`, else `AWS_REGION`: where the models are enabled. */
  region: string;
  /** `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`: a local server that speaks Bedrock Runtime (tests). */
  endpoint?: string;
  /** Static credentials (tests); on AWS leave them out: the default chain gives the function's role. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** The settings that name the chat models, for error messages. */
const MODEL_SETTINGS = "LLM_MODEL, REASON_LLM_MODEL, EVAL_LLM_MODEL";

/** Stop reasons that mean the answer was withheld rather than given. */
const WITHHELD = new Set(["guardrail_intervened", "content_filtered"]);

/** A Bedrock Runtime client that does not retry (core does) and does not walk I/O for a logger. */
export function bedrockClient(options: BedrockOptions): BedrockRuntimeClient {
  const client = new BedrockRuntimeClient({
    ...clientConfig(
      {
        region: options.region,
        ...(options.credentials ? { credentials: options.credentials } : {}),
      },
      options.endpoint,
    ),
    maxAttempts: 1,
  });
  client.middlewareStack.remove("loggerMiddleware");
  return client;
}

/**
 * @example
 * const llm = new BedrockLlm({ region: "us-east-1" });
 * const session = createLlmSession({ port: llm, config: loadLlmConfig({ LLM_MODEL: "amazon.nova-lite-v1:0" }), budget: {} });
 */
export class BedrockLlm implements LlmPort {
  private readonly client: Pick<BedrockRuntimeClient, "send">;
  private readonly region: string;
  /** Models that answered a forced `toolChoice` with a ValidationException: offered the tool instead. */
  private readonly toolChoiceRefused = new Set<string>();

  constructor(options: BedrockOptions) {
    this.client = bedrockClient(options);
    this.region = options.region;
  }

  async complete(request: LlmRequest): Promise<LlmResponse> {
    const forceTool = !this.toolChoiceRefused.has(request.model);
    let output: ConverseCommandOutput;
    try {
      output = await this.converse(request, forceTool);
    } catch (error) {
      if (!forceTool || !refusesToolChoice(error, request)) throw this.translate(error, request);
      this.toolChoiceRefused.add(request.model);
      try {
        output = await this.converse(request, false);
      } catch (second) {
        throw this.translate(second, request);
      }
    }
    return this.response(output, request);
  }

  private converse(request: LlmRequest, forceTool: boolean): Promise<ConverseCommandOutput> {
    if (request.onDelta) return this.converseStream(request, forceTool, request.onDelta);
    return this.client.send(new ConverseCommand(converseInput(request, forceTool)), {
      abortSignal: AbortSignal.timeout(request.timeoutMs),
    });
  }

  /** ConverseStream, folded into the output Converse would have answered. */
  private async converseStream(
    request: LlmRequest,
    forceTool: boolean,
    onDelta: (text: string) => void,
  ): Promise<ConverseCommandOutput> {
    const answer = (await this.client.send(
      new ConverseStreamCommand(converseInput(request, forceTool)),
      { abortSignal: AbortSignal.timeout(request.timeoutMs) },
    )) as ConverseStreamCommandOutput;
    const blocks: ContentBlock[] = [];
    const output: ConverseCommandOutput = {
      output: { message: { role: "assistant", content: blocks } },
      stopReason: undefined,
      usage: undefined,
      metrics: undefined,
      $metadata: answer.$metadata,
    };
    for await (const event of answer.stream ?? []) {
      foldEvent(event, blocks, output, onDelta);
    }
    // The text parts of a block arrive in pieces: joined, as Converse answers them.
    for (const block of blocks) {
      if (block.toolUse && typeof block.toolUse.input === "string") {
        try {
          block.toolUse.input = JSON.parse(block.toolUse.input || "null");
        } catch {
          // Left as text: core's repair round says what is wrong with it.
        }
      }
    }
    return output;
  }

  private response(output: ConverseCommandOutput, request: LlmRequest): LlmResponse {
    const content = output?.output?.message?.content;
    if (!Array.isArray(content)) {
      throw new RetryableError(
        "llm_bad_response",
        `Bedrock in ${this.region} (model '${request.model}') answered without a message: ${JSON.stringify(output?.output ?? null).slice(0, 200)}`,
      );
    }
    const stopReason = output.stopReason;
    if (stopReason !== undefined && WITHHELD.has(stopReason)) {
      throw new StepError(
        "llm_refused",
        `the model's answer was withheld (${stopReason}): ${textOf(content) || "no text"}`,
      );
    }
    const tool = request.jsonSchema ? toolName(request.jsonSchema.name) : undefined;
    const toolUse = content.find((block) => block.toolUse?.name === tool)?.toolUse;
    const reasoning = content
      .map((block) => block.reasoningContent?.reasoningText?.text ?? "")
      .join("");
    return {
      text: toolUse !== undefined ? JSON.stringify(toolUse.input ?? null) : textOf(content),
      // Converse does not name the model that answered: it is the one asked for.
      model: request.model,
      inputTokens: output.usage?.inputTokens ?? 0,
      outputTokens: output.usage?.outputTokens ?? 0,
      ...(reasoning !== "" ? { reasoning } : {}),
      // Converse's own words (`end_turn`, `max_tokens`, `tool_use`), kept in the call's trace.
      ...(stopReason !== undefined ? { finishReason: stopReason } : {}),
    };
  }

  private translate(error: unknown, request: LlmRequest): unknown {
    return translateBedrockError(error, {
      kind: "llm",
      model: request.model,
      region: this.region,
      timeoutMs: request.timeoutMs,
      settings: MODEL_SETTINGS,
    });
  }
}

/**
 * Folds one ConverseStream event into the output being built: text, tool input
 * and reasoning appended to their block, the stop reason, usage. An error event
 * is thrown as the exception Converse would have answered.
 */
function foldEvent(
  event: ConverseStreamOutput,
  blocks: ContentBlock[],
  output: ConverseCommandOutput,
  onDelta: (text: string) => void,
): void {
  if (event.contentBlockStart) {
    const tool = event.contentBlockStart.start?.toolUse;
    const index = event.contentBlockStart.contentBlockIndex ?? blocks.length;
    if (tool) {
      blocks[index] = {
        toolUse: { toolUseId: tool.toolUseId, name: tool.name, input: "" as never },
      };
    }
  } else if (event.contentBlockDelta) {
    const index = event.contentBlockDelta.contentBlockIndex ?? 0;
    const delta = event.contentBlockDelta.delta;
    blocks[index] ??= {} as ContentBlock;
    const block = blocks[index] as Record<string, unknown> & ContentBlock;
    if (delta?.text !== undefined) {
      block.text = (block.text ?? "") + delta.text;
      onDelta(delta.text);
    } else if (delta?.toolUse?.input !== undefined && block.toolUse) {
      block.toolUse.input = ((block.toolUse.input as unknown as string) +
        delta.toolUse.input) as never;
      onDelta(delta.toolUse.input);
    } else if (delta?.reasoningContent?.text !== undefined) {
      const had = block.reasoningContent?.reasoningText?.text ?? "";
      block.reasoningContent = { reasoningText: { text: had + delta.reasoningContent.text } };
    }
  } else if (event.messageStop) {
    output.stopReason = event.messageStop.stopReason;
  } else if (event.metadata) {
    output.usage = event.metadata.usage;
    output.metrics = event.metadata.metrics;
  } else {
    // The stream's own exceptions (throttling, model stream errors) as Converse throws them;
    // `messageStart` and `contentBlockStop` carry nothing the answer needs.
    const [name, value] =
      Object.entries(event).find(([k, v]) => v !== undefined && k.endsWith("Exception")) ?? [];
    if (name && value) {
      throw Object.assign(new Error(String((value as { message?: unknown }).message ?? name)), {
        name: name.charAt(0).toUpperCase() + name.slice(1),
        $metadata: {},
      });
    }
  }
}

/** The Converse request for one port call. */
export function converseInput(request: LlmRequest, forceTool: boolean): ConverseCommandInput {
  const { system, messages } = conversation(request.messages);
  const input: ConverseCommandInput = { modelId: request.model, messages };
  const inference: NonNullable<ConverseCommandInput["inferenceConfig"]> = {};
  if (request.maxOutputTokens !== undefined) inference.maxTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) inference.temperature = request.temperature;
  if (Object.keys(inference).length > 0) input.inferenceConfig = inference;

  if (request.jsonSchema !== undefined) {
    const name = toolName(request.jsonSchema.name);
    input.toolConfig = {
      tools: [
        {
          toolSpec: {
            name,
            description: `Give your answer by calling this tool: its input is your '${request.jsonSchema.name}' answer.`,
            // The SDK's document type; the schema is plain JSON.
            inputSchema: { json: request.jsonSchema.schema as never },
          },
        },
      ],
      ...(forceTool ? { toolChoice: { tool: { name } } } : {}),
    };
    if (!forceTool) {
      system.push({ text: `Answer only by calling the tool '${name}' with your answer as input.` });
    }
  } else if (request.jsonObject) {
    system.push({ text: "Answer with one JSON object and no other text." });
  }
  if (system.length > 0) input.system = system;
  return input;
}

/**
 * System messages go apart; the rest become turns, consecutive messages of one
 * role in one turn (Converse wants user and assistant to alternate).
 */
function conversation(list: LlmMessage[]): { system: SystemContentBlock[]; messages: Message[] } {
  const system: SystemContentBlock[] = [];
  const messages: Message[] = [];
  for (const message of list) {
    // Converse refuses a blank text block.
    const block = { text: message.content.trim() === "" ? "(empty)" : message.content };
    if (message.role === "system") {
      system.push(block);
      continue;
    }
    const last = messages.at(-1);
    if (last?.role === message.role) last.content?.push(block);
    else messages.push({ role: message.role, content: [block] });
  }
  return { system, messages };
}

/** A tool name as Converse allows: letters, digits, `_` and `-`, at most 64. */
function toolName(schemaName: string): string {
  return schemaName.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "answer";
}

function textOf(content: ContentBlock[]): string {
  return content.map((block) => block.text ?? "").join("");
}

/** A ValidationException about `toolChoice`: this model takes tools but not a forced one. */
function refusesToolChoice(error: unknown, request: LlmRequest): boolean {
  const e = error as { name?: unknown; message?: unknown };
  return (
    request.jsonSchema !== undefined &&
    e?.name === "ValidationException" &&
    typeof e.message === "string" &&
    /tool_?choice/i.test(e.message)
  );
}

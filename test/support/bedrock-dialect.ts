/**
 * The scripted LLM server's Bedrock Runtime, for the real
 * `@aws-sdk/client-bedrock-runtime` pointed at it (`AWS_ENDPOINT_URL_BEDROCK_RUNTIME`).
 * It listens on a port of its own in HTTP/2 without TLS (h2c), as the client's
 * default handler speaks HTTP/2. `POST /model/{modelId}/converse` answers in Converse's shape from the same
 * queues and rules as chat completions, and `POST /model/{modelId}/invoke`
 * answers Titan Text Embeddings v2's shape. A Converse request is recorded like
 * a chat completion: its system blocks and turns as `messages`, and as
 * `schemaName` the tool it forces or offers, else "json_object" when the system
 * prompt asks for a JSON object, else "text". Faults come back as Bedrock's
 * errors: the status, `x-amzn-errortype` with the exception's name, `{message}`.
 * `POST /model/{modelId}/converse-stream` answers the same as ConverseStream
 * does: AWS event stream frames (`messageStart`, `contentBlockDelta`s of a few
 * characters, `contentBlockStop`, `messageStop`, `metadata`), encoded with the
 * SDK's own codec.
 *
 * @example
 * const llm = await startScriptedLlm();
 * llm.queue("plan", { fault: "429" }, { reasoning: "...", plan: [...] });
 * const port = new BedrockLlm({ region: "us-east-1", endpoint: llm.bedrockUrl, credentials });
 */
import type { IncomingHttpHeaders } from "node:http";
import { createServer, type Http2ServerResponse, type ServerHttp2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { EventStreamCodec } from "@smithy/core/event-streams";
import {
  type Answer,
  bagOfWords,
  estimateTokens,
  type Fault,
  isFault,
  type RecordedRequest,
  Reply,
} from "./llm-answers";

/** What the server lends the Bedrock routes: its answers, records and timers. */
export interface BedrockContext {
  answerFor(request: RecordedRequest): Promise<Answer | undefined>;
  record(request: RecordedRequest): void;
  /** The next queued "embeddings" answer, if any. */
  nextEmbeddingAnswer(): Answer | undefined;
  recordEmbeddings(texts: string[]): void;
  /** Runs `then` after `ms`, unless the server closes first. */
  later(ms: number, then: () => void): void;
}

const ROUTE = /^\/model\/([^/]+)\/(converse-stream|converse|invoke)$/;

type Action = "converse" | "converse-stream" | "invoke";

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);

/** Characters per streamed text delta. */
const STREAM_CHUNK_CHARS = 8;

/** The exception Bedrock names for a status. */
const EXCEPTIONS: Record<number, string> = {
  400: "ValidationException",
  403: "AccessDeniedException",
  404: "ResourceNotFoundException",
  408: "ModelTimeoutException",
  424: "ModelErrorException",
  429: "ThrottlingException",
  500: "InternalServerException",
  503: "ServiceUnavailableException",
};

type ServerResponse = Http2ServerResponse;

/** Starts the h2c listener on a free loopback port; `close` ends its sessions. */
export async function listenBedrock(
  context: BedrockContext,
): Promise<{ url: string; close(): Promise<void> }> {
  const sessions = new Set<ServerHttp2Session>();
  const server = createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const route = bedrockRoute(req.method, path);
    try {
      if (route === undefined) {
        sendError(res, 404, "UnknownOperationException", `scripted Bedrock: no route ${path}`);
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString("utf8");
      await answerBedrock(route, { path, headers: req.headers, body }, res, context);
    } catch (error) {
      // A responder that throws is a test bug: say it loudly rather than hang.
      if (!res.headersSent) sendError(res, 500, "InternalServerException", String(error));
    }
  });
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The route and model of a Bedrock Runtime path, or undefined for any other path. */
function bedrockRoute(
  method: string | undefined,
  path: string,
): { model: string; action: Action } | undefined {
  const match = method === "POST" ? ROUTE.exec(path) : null;
  if (match === null) return undefined;
  return { model: decodeURIComponent(match[1]!), action: match[2] as Action };
}

async function answerBedrock(
  route: { model: string; action: Action },
  request: { path: string; headers: IncomingHttpHeaders; body: string },
  res: ServerResponse,
  context: BedrockContext,
): Promise<void> {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(request.body || "{}") as Record<string, unknown>;
  } catch {
    return sendError(res, 400, "ValidationException", "scripted Bedrock: the body is not JSON");
  }
  if (route.action === "invoke") return embed(route.model, body, res, context);
  const recorded = recordConverse(route.model, request.path, request.headers, body);
  context.record(recorded);
  const answer = await context.answerFor(recorded);
  if (answer === undefined) {
    return sendError(
      res,
      500,
      "InternalServerException",
      `scripted Bedrock: no answer for schema '${recorded.schemaName}' (model ${recorded.model}): ` +
        `add llm.on("${recorded.schemaName}", ...) or llm.queue("${recorded.schemaName}", ...)`,
    );
  }
  if (isFault(answer)) return injectFault(answer, recorded, res, context);
  if (route.action === "converse-stream")
    return streamConverse(converseOutput(recorded, answer), res);
  sendJson(res, 200, converseOutput(recorded, answer));
}

/** A Converse answer as ConverseStream's events, each text or tool input in small deltas. */
function streamConverse(whole: Record<string, unknown>, res: ServerResponse): void {
  const message = (whole.output as { message: { content: Record<string, unknown>[] } }).message;
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
  const send = (type: string, body: unknown) =>
    res.write(
      codec.encode({
        headers: {
          ":message-type": { type: "string", value: "event" },
          ":event-type": { type: "string", value: type },
          ":content-type": { type: "string", value: "application/json" },
        },
        body: new TextEncoder().encode(JSON.stringify(body)),
      }),
    );
  const pieces = (text: string) => {
    const out: string[] = [];
    for (let at = 0; at < text.length; at += STREAM_CHUNK_CHARS) {
      out.push(text.slice(at, at + STREAM_CHUNK_CHARS));
    }
    return out;
  };
  send("messageStart", { role: "assistant" });
  message.content.forEach((block, contentBlockIndex) => {
    const toolUse = block.toolUse as
      | { toolUseId: string; name: string; input: unknown }
      | undefined;
    const reasoning = (block.reasoningContent as { reasoningText?: { text: string } } | undefined)
      ?.reasoningText?.text;
    if (toolUse) {
      const { toolUseId, name } = toolUse;
      send("contentBlockStart", { contentBlockIndex, start: { toolUse: { toolUseId, name } } });
      for (const input of pieces(JSON.stringify(toolUse.input))) {
        send("contentBlockDelta", { contentBlockIndex, delta: { toolUse: { input } } });
      }
    } else if (reasoning !== undefined) {
      send("contentBlockDelta", {
        contentBlockIndex,
        delta: { reasoningContent: { text: reasoning } },
      });
    } else {
      for (const text of pieces(String(block.text ?? ""))) {
        send("contentBlockDelta", { contentBlockIndex, delta: { text } });
      }
    }
    send("contentBlockStop", { contentBlockIndex });
  });
  send("messageStop", { stopReason: whole.stopReason });
  send("metadata", { usage: whole.usage, metrics: whole.metrics });
  res.end();
}

function converseOutput(request: RecordedRequest, answer: Answer): Record<string, unknown> {
  const inputTokens = estimateTokens(request.messages.map((m) => m.content).join(""));
  const asTool = request.schemaName !== "text" && request.schemaName !== "json_object";
  if (asTool && !(answer instanceof Reply) && typeof answer !== "string") {
    return output(
      [{ toolUse: { toolUseId: "tooluse_scripted", name: request.schemaName, input: answer } }],
      "tool_use",
      inputTokens,
      estimateTokens(JSON.stringify(answer)),
    );
  }
  const reply =
    answer instanceof Reply
      ? answer
      : new Reply(typeof answer === "string" ? answer : JSON.stringify(answer));
  const text = reply.extra.refusal ?? reply.content ?? "";
  const content: Record<string, unknown>[] = [];
  if (reply.extra.reasoning_content !== undefined) {
    content.push({ reasoningContent: { reasoningText: { text: reply.extra.reasoning_content } } });
  }
  content.push({ text });
  const stopReason =
    reply.extra.refusal !== undefined
      ? "content_filtered"
      : reply.extra.finish_reason === "length"
        ? "max_tokens"
        : "end_turn";
  return output(content, stopReason, inputTokens, estimateTokens(text));
}

function output(
  content: Record<string, unknown>[],
  stopReason: string,
  inputTokens: number,
  outputTokens: number,
): Record<string, unknown> {
  return {
    output: { message: { role: "assistant", content } },
    stopReason,
    usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
    metrics: { latencyMs: 1 },
  };
}

/** Titan Text Embeddings v2: one text per call, `{embedding, inputTextTokenCount}`. */
function embed(
  model: string,
  body: Record<string, unknown>,
  res: ServerResponse,
  context: BedrockContext,
): void {
  const next = context.nextEmbeddingAnswer();
  if (next !== undefined && isFault(next)) {
    injectFault(next, recordConverse(model, `/model/${model}/invoke`, {}, {}), res, context);
    return;
  }
  if (typeof body.inputText !== "string") {
    sendError(res, 400, "ValidationException", "scripted Bedrock: inputText is required");
    return;
  }
  context.recordEmbeddings([body.inputText]);
  sendJson(res, 200, {
    embedding: bagOfWords(body.inputText),
    inputTextTokenCount: estimateTokens(body.inputText),
  });
}

function injectFault(
  fault: Fault,
  request: RecordedRequest,
  res: ServerResponse,
  context: BedrockContext,
): void {
  switch (fault.fault) {
    case "429":
      sendError(res, 429, "ThrottlingException", "Too many requests, please wait.");
      break;
    case "500":
      sendError(res, 500, "InternalServerException", fault.message ?? "scripted error");
      break;
    case "status":
      sendError(
        res,
        fault.status,
        fault.code ?? EXCEPTIONS[fault.status] ?? "ValidationException",
        fault.message ?? `scripted ${fault.status}`,
      );
      break;
    case "hang":
      context.later(fault.ms, () => {
        if (!res.destroyed) sendError(res, 503, "ServiceUnavailableException", "scripted hang");
      });
      break;
    case "malformed":
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"output": {"message": ');
      break;
    case "bad_json":
      sendJson(res, 200, converseOutput(request, "Sure! {this is not: JSON,,}"));
      break;
    case "close":
      res.destroy();
      break;
    case "slow":
      context.later(fault.ms, () => {
        if (!res.destroyed) sendJson(res, 200, converseOutput(request, fault.answer));
      });
      break;
  }
}

function recordConverse(
  model: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: Record<string, unknown>,
): RecordedRequest {
  const system = Array.isArray(body.system) ? (body.system as { text?: unknown }[]) : [];
  const turns = Array.isArray(body.messages)
    ? (body.messages as { role?: unknown; content?: unknown }[])
    : [];
  const messages = [
    ...system.map((block) => ({ role: "system", content: String(block.text ?? "") })),
    ...turns.map((turn) => ({
      role: String(turn.role),
      content: (Array.isArray(turn.content) ? (turn.content as { text?: unknown }[]) : [])
        .map((block) => (typeof block.text === "string" ? block.text : JSON.stringify(block)))
        .join("\n\n"),
    })),
  ];
  const toolConfig = body.toolConfig as
    | { tools?: { toolSpec?: { name?: string } }[]; toolChoice?: { tool?: { name?: string } } }
    | undefined;
  const tool = toolConfig?.toolChoice?.tool?.name ?? toolConfig?.tools?.[0]?.toolSpec?.name;
  const asksJson = system.some((block) => /\bJSON object\b/.test(String(block.text)));
  return {
    path,
    headers,
    body,
    model,
    messages,
    schemaName: tool ?? (asksJson ? "json_object" : "text"),
    responseFormat: toolConfig as Record<string, unknown> | undefined,
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, type?: string): void {
  res.writeHead(status, {
    "content-type": "application/json",
    ...(type ? { "x-amzn-errortype": type } : {}),
  });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { message }, type);
}

/**
 * A scripted OpenAI-compatible server for tests: a real HTTP server on 127.0.0.1
 * that the real `openai` client talks to. It answers chat completions by purpose
 * (the `json_schema` name, or "text" / "json_object"), from queues of answers in
 * order and then from rules, and can inject the faults the LLM layer must survive:
 * 429 with Retry-After, 500 (any status), a hang past the client's timeout, a
 * slow answer, a connection closed without an answer, a body that is not JSON,
 * content that is not JSON. Asked with `stream: true`, it sends the same
 * answer as OpenAI does: Server-Sent Events of `chat.completion.chunk`s, a few
 * characters each (`chunkChars`, `chunkDelayMs` apart), then `data: [DONE]`.
 *
 * @example
 * const llm = await startScriptedLlm();
 * llm.queue("plan", { fault: "429", retryAfter: 1 }, { reasoning: "...", plan: [...] });
 * llm.on("text", (req) => `echo: ${req.messages.at(-1)?.content}`);
 * // ... point OPENAI_BASE_URL at llm.url ...
 * expect(llm.requests.map((r) => r.schemaName)).toEqual(["plan", "plan"]);
 * await llm.close();
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type BedrockContext, listenBedrock } from "./bedrock-dialect";
import {
  type Answer,
  bagOfWords,
  estimateTokens,
  type Fault,
  isFault,
  type Match,
  type RecordedRequest,
  Reply,
  type Responder,
  type ResponderFn,
} from "./llm-answers";

/** The answers, faults and records of the server, for the tests that script it. */
export * from "./llm-answers";

export interface ScriptedLlm {
  /** The base URL, ending in `/v1`: pass it as `baseURL` / `OPENAI_BASE_URL`. */
  readonly url: string;
  /** The Bedrock Runtime endpoint (Converse, Titan embeddings): `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`. */
  readonly bedrockUrl: string;
  /** Every chat completion request received, in order (not `GET /v1/models`). */
  readonly requests: RecordedRequest[];
  /** The texts of every `/v1/embeddings` request, in order. */
  readonly embeddingRequests: string[][];
  /** Adds a rule; the rule added last wins when several match. */
  on(match: Match, responder: ResponderFn): ScriptedLlm;
  on(match: Match, answer: Answer): ScriptedLlm;
  /** Answers in order for a schema name (or "text"), before any rule. */
  queue(schemaName: string, ...answers: Answer[]): ScriptedLlm;
  /** How answers asked with `stream: true` are sent; a test may change it (reset restores it). */
  streaming: StreamOptions;
  /**
   * JSON bodies for `GET` paths beside the OpenAI routes, as local servers list
   * their models' contexts: llama.cpp's `/props`, Ollama's `/api/ps`. Empty (and
   * emptied by reset): those paths answer 404, as OpenAI's API does.
   */
  listings: Record<string, unknown>;
  /**
   * llama.cpp's `POST /tokenize`: the tokens a text counts, by this function;
   * null (and nulled by reset): the route answers 404, as Ollama's and OpenAI's do.
   */
  tokenize: ((text: string) => number) | null;
  /** Forgets rules, queues and recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

/** How a scripted server streams its answers when asked with `stream: true`. */
export interface StreamOptions {
  /** Characters per chunk (default 8, or more so that an answer takes at most 32 chunks). */
  chunkChars?: number;
  /** Milliseconds between two chunks (default none). */
  chunkDelayMs?: number;
  /** Called as each content chunk leaves the server (for measuring the way to a client). */
  onChunk?: (text: string) => void;
  /** Awaited before each content chunk is sent: a test holds the answer mid-way with it. */
  beforeChunk?: (index: number, text: string, request: RecordedRequest) => Promise<void> | void;
}

/** Starts a scripted server on a free port. With `apiKey`, other bearer tokens get a 401. */
export async function startScriptedLlm(
  options: { apiKey?: string } & StreamOptions = {},
): Promise<ScriptedLlm> {
  let rules: { match: Match; responder: Responder }[] = [];
  let queues = new Map<string, Answer[]>();
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let completionId = 0;
  const { apiKey: _key, ...streamDefaults } = options;

  async function answerFor(request: RecordedRequest): Promise<Answer | undefined> {
    const queued = queues.get(request.schemaName);
    if (queued !== undefined && queued.length > 0) return queued.shift();
    for (let i = rules.length - 1; i >= 0; i--) {
      const rule = rules[i]!;
      const matches =
        typeof rule.match === "function" ? rule.match(request) : rule.match === request.schemaName;
      if (matches) {
        return typeof rule.responder === "function" ? rule.responder(request) : rule.responder;
      }
    }
    return undefined;
  }

  async function completions(request: RecordedRequest, res: ServerResponse): Promise<void> {
    const answer = await answerFor(request);
    if (answer === undefined) {
      return sendError(
        res,
        500,
        `scripted LLM: no answer for schema '${request.schemaName}' (model ${request.model}): ` +
          `add llm.on("${request.schemaName}", ...) or llm.queue("${request.schemaName}", ...)`,
      );
    }
    if (isFault(answer) && answer.fault === "slow") {
      await wait(answer.ms);
      if (res.destroyed) return;
      return sendAnswer(request, answer.answer, res);
    }
    if (isFault(answer)) return injectFault(answer, request, res);
    return sendAnswer(request, answer, res);
  }

  /** Sends an answer that is not a fault: as a completion, or streamed when asked. */
  async function sendAnswer(
    request: RecordedRequest,
    answer: Answer,
    res: ServerResponse,
  ): Promise<void> {
    const reply =
      answer instanceof Reply
        ? answer
        : new Reply(typeof answer === "string" ? answer : JSON.stringify(answer));
    if (request.body.stream === true) return streamCompletion(request, reply, res);
    sendJson(res, 200, completion(request, reply));
  }

  /** The completion as OpenAI streams it: a role chunk, content chunks, the finish, usage, `[DONE]`. */
  async function streamCompletion(
    request: RecordedRequest,
    reply: Reply,
    res: ServerResponse,
  ): Promise<void> {
    const whole = completion(request, reply) as {
      id: string;
      created: number;
      choices: [{ message: Record<string, unknown>; finish_reason: string }];
      usage: unknown;
    };
    const { content, role: _role, ...rest } = whole.choices[0].message;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id: whole.id,
      object: "chat.completion.chunk",
      created: whole.created,
      model: request.model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    send(chunk({ role: "assistant", content: "" }));
    if (typeof rest.reasoning_content === "string") {
      send(chunk({ reasoning_content: rest.reasoning_content }));
    }
    if (typeof rest.refusal === "string") send(chunk({ refusal: rest.refusal }));
    const text = typeof content === "string" ? content : "";
    const { streaming } = llm;
    // Unless a test sets the chunk size, at most 32 chunks: a 50 KB answer in 8-character
    // chunks 5 ms apart would take 32 s, past the stacks' 2 s LLM_TIMEOUT_MS.
    const size = Math.max(1, streaming.chunkChars ?? Math.max(8, Math.ceil(text.length / 32)));
    for (let at = 0, index = 0; at < text.length; at += size, index++) {
      if (res.destroyed) return;
      // No pause unless a test asks for one: the stacks' LLM timeouts are short.
      if (at > 0 && streaming.chunkDelayMs) await wait(streaming.chunkDelayMs);
      const piece = text.slice(at, at + size);
      await streaming.beforeChunk?.(index, piece, request);
      send(chunk({ content: piece }));
      streaming.onChunk?.(piece);
    }
    send(chunk({}, whole.choices[0].finish_reason));
    const streamOptions = request.body.stream_options as { include_usage?: unknown } | undefined;
    if (streamOptions?.include_usage === true)
      send({ ...chunk({}), choices: [], usage: whole.usage });
    res.end("data: [DONE]\n\n");
  }

  function wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  }

  function completion(request: RecordedRequest, reply: Reply): Record<string, unknown> {
    const { finish_reason = "stop", ...extra } = reply.extra;
    const promptTokens = estimateTokens(request.messages.map((m) => m.content).join(""));
    const completionTokens = estimateTokens(reply.content ?? "");
    return {
      id: `chatcmpl-scripted-${++completionId}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: reply.content, refusal: null, ...extra },
          finish_reason,
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    };
  }

  function injectFault(fault: Fault, request: RecordedRequest, res: ServerResponse): void {
    switch (fault.fault) {
      case "429": {
        const headers: Record<string, string> = {};
        if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
        if (fault.retryAfterMs !== undefined)
          headers["retry-after-ms"] = String(fault.retryAfterMs);
        sendError(res, 429, "scripted rate limit", "rate_limit_exceeded", headers);
        break;
      }
      case "500":
        sendError(res, 500, fault.message ?? "scripted server error");
        break;
      case "status":
        sendError(res, fault.status, fault.message ?? `scripted ${fault.status}`, fault.code);
        break;
      case "hang": {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) sendError(res, 504, `scripted hang of ${fault.ms} ms`);
        }, fault.ms);
        timers.add(timer);
        break;
      }
      case "malformed":
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"id": "chatcmpl-broken", "choices": [');
        break;
      case "bad_json":
        sendJson(res, 200, completion(request, new Reply("Sure! {this is not: JSON,,}")));
        break;
      case "close":
        res.socket?.destroy();
        break;
      case "slow":
        // Handled before a fault is injected (`completions`); embeddings answer at once.
        sendError(res, 500, "scripted LLM: a slow answer is for chat completions");
        break;
    }
  }

  /** `/v1/embeddings`: hashed bag-of-words vectors, or a queued fault (key "embeddings"). */
  function embeddings(body: { model?: unknown; input?: unknown }, res: ServerResponse): void {
    const queued = queues.get("embeddings");
    const next = queued !== undefined && queued.length > 0 ? queued.shift() : undefined;
    if (next !== undefined && isFault(next)) {
      injectFault(next, record("/v1/embeddings", {}, { model: body.model }), res);
      return;
    }
    const input = typeof body.input === "string" ? [body.input] : body.input;
    if (!Array.isArray(input) || input.some((t) => typeof t !== "string")) {
      sendError(res, 400, "scripted LLM: input must be a string or an array of strings");
      return;
    }
    embeddingRequests.push(input as string[]);
    const texts = input as string[];
    sendJson(res, 200, {
      object: "list",
      model: String(body.model),
      data: texts.map((text, index) => ({
        object: "embedding",
        index,
        embedding: bagOfWords(text),
      })),
      usage: {
        prompt_tokens: texts.reduce((n, t) => n + estimateTokens(t), 0),
        total_tokens: texts.reduce((n, t) => n + estimateTokens(t), 0),
      },
    });
  }

  const embeddingRequests: string[][] = [];

  const bedrockContext: BedrockContext = {
    answerFor,
    record: (request) => requests.push(request),
    nextEmbeddingAnswer: () => queues.get("embeddings")?.shift(),
    recordEmbeddings: (texts) => embeddingRequests.push(texts),
    later(ms, then) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        then();
      }, ms);
      timers.add(timer);
    },
  };

  const server = createServer(async (req, res) => {
    try {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      if (
        options.apiKey !== undefined &&
        req.headers.authorization !== `Bearer ${options.apiKey}`
      ) {
        return sendError(res, 401, "Incorrect API key provided", "invalid_api_key");
      }
      if (req.method === "GET" && path in llm.listings) {
        return sendJson(res, 200, llm.listings[path]);
      }
      if (req.method === "GET" && path === "/v1/models") {
        const models = [...new Set(requests.map((r) => r.model))];
        return sendJson(res, 200, {
          object: "list",
          data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "scripted" })),
        });
      }
      if (req.method === "POST" && path === "/tokenize" && llm.tokenize) {
        const { content } = JSON.parse((await readBody(req)) || "{}") as { content?: string };
        const count = llm.tokenize(content ?? "");
        return sendJson(res, 200, { tokens: Array.from({ length: count }, (_, i) => i) });
      }
      if (req.method === "POST" && path === "/v1/embeddings") {
        return embeddings(JSON.parse((await readBody(req)) || "{}"), res);
      }
      if (req.method !== "POST" || path !== "/v1/chat/completions") {
        return sendError(res, 404, `scripted LLM: no route ${req.method} ${path}`);
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(await readBody(req)) as Record<string, unknown>;
      } catch {
        return sendError(res, 400, "scripted LLM: the request body is not JSON");
      }
      const request = record(path, req.headers, body);
      requests.push(request);
      await completions(request, res);
    } catch (error) {
      // A responder that throws is a test bug: say it loudly rather than hang.
      if (!res.headersSent) sendError(res, 500, `scripted LLM responder threw: ${String(error)}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  // Bedrock's client speaks HTTP/2 (its default handler): the same answers on an h2c port of their own.
  const bedrock = await listenBedrock(bedrockContext);

  const llm: ScriptedLlm = {
    url: `http://127.0.0.1:${port}/v1`,
    bedrockUrl: bedrock.url,
    streaming: { ...streamDefaults },
    listings: {},
    tokenize: null,
    requests,
    embeddingRequests,
    on(match: Match, responder: Responder) {
      rules.push({ match, responder });
      return llm;
    },
    queue(schemaName, ...answers) {
      queues.set(schemaName, [...(queues.get(schemaName) ?? []), ...answers]);
      return llm;
    },
    reset() {
      llm.streaming = { ...streamDefaults };
      llm.listings = {};
      llm.tokenize = null;
      rules = [];
      queues = new Map();
      requests.length = 0;
      embeddingRequests.length = 0;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await bedrock.close();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
  return llm;
}

function record(
  path: string,
  headers: IncomingHttpHeaders,
  body: Record<string, unknown>,
): RecordedRequest {
  const responseFormat = body.response_format as Record<string, unknown> | undefined;
  const schema = responseFormat?.json_schema as { name?: unknown } | undefined;
  const schemaName =
    typeof schema?.name === "string"
      ? schema.name
      : responseFormat?.type === "json_object"
        ? "json_object"
        : "text";
  const messages = Array.isArray(body.messages)
    ? (body.messages as { role?: unknown; content?: unknown }[]).map((m) => ({
        role: String(m.role),
        content: typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""),
      }))
    : [];
  return {
    path,
    headers,
    body,
    model: String(body.model),
    messages,
    schemaName,
    responseFormat,
  };
}

async function readBody(req: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  code?: string,
  headers: Record<string, string> = {},
): void {
  const type = status >= 500 ? "server_error" : "invalid_request_error";
  sendJson(res, status, { error: { message, type, param: null, code: code ?? null } }, headers);
}

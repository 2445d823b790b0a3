/**
 * What context an OpenAI-compatible server gives a model, from the server's own
 * listing where it says: llama.cpp's `GET /props` (`default_generation_settings.n_ctx`,
 * the context of one slot, which one request gets) and Ollama's `GET /api/ps`
 * (`context_length` of a loaded model). OpenAI's API and most hosted ones say
 * nothing (the core then falls back to `LLM_CONTEXT_TOKENS`). A probe that fails
 * says nothing either: it must never fail a call.
 */
/** How long one probe may take: a local server answers these at once. */
const PROBE_TIMEOUT_MS = 3_000;
/**
 * How long an answer is kept: a server restarted with another context is seen
 * after this long, or at once by a prompt that the kept context cannot hold
 * (`fresh`), or by the next call after the server refused one for its context.
 */
const KEEP_MS = 5 * 60_000;

/**
 * Tokens a chat template puts around each message (and the prompt), beyond its
 * text: llama.cpp's templates use 3 to 6 (`<|im_start|>role\n … <|im_end|>\n`);
 * counted high, as the estimate is.
 */
const TEMPLATE_TOKENS = 8;

/** Hosts known to list no context (their models' contexts are large and documented). */
const SILENT_HOSTS = new Set(["api.openai.com"]);

/**
 * Asks a server for a model's context and remembers the answer for a while.
 *
 * @example
 * const contexts = new ServerContext("http://127.0.0.1:8080/v1", "no-key");
 * await contexts.tokens("qwen3-4b") // 4096 from llama.cpp's /props
 */
export class ServerContext {
  private readonly root: string | undefined;
  private readonly known = new Map<string, { at: number; tokens: Promise<number | undefined> }>();

  /** `apiKey` goes with each probe: llama.cpp started with `--api-key` wants it on `/props`. */
  constructor(
    baseURL: string,
    private readonly apiKey: string,
    private readonly now: () => number = Date.now,
  ) {
    const url = new URL(baseURL);
    // The listings live beside the OpenAI routes, at the server's root.
    this.root = SILENT_HOSTS.has(url.hostname)
      ? undefined
      : `${url.origin}${url.pathname.replace(/\/v1\/?$/, "").replace(/\/$/, "")}`;
  }

  /**
   * The model's context in tokens, or undefined when the server does not say.
   * `fresh`: asked of the server now, past the answer kept (a prompt refused
   * for the context asks, so that a restarted server is seen at once).
   */
  tokens(model: string, fresh = false): Promise<number | undefined> {
    if (this.root === undefined) return Promise.resolve(undefined);
    const kept = this.known.get(model);
    if (!fresh && kept !== undefined && this.now() - kept.at < KEEP_MS) return kept.tokens;
    const tokens = this.probe(this.root, model);
    this.known.set(model, { at: this.now(), tokens });
    return tokens;
  }

  /**
   * The prompt's tokens by the server's own tokenizer: llama.cpp's `POST /tokenize`
   * of each message's text, plus {@link TEMPLATE_TOKENS} per message for the chat
   * template's markers around it. Undefined where the server has no such route
   * (Ollama, OpenAI): the caller keeps its estimate.
   */
  async count(messages: readonly { content: string }[]): Promise<number | undefined> {
    // Asked only for a prompt whose estimate does not fit: a server without the route costs a 404 then.
    if (this.root === undefined) return undefined;
    let tokens = TEMPLATE_TOKENS;
    for (const message of messages) {
      const answer = await postJson(
        `${this.root}/tokenize`,
        { authorization: `Bearer ${this.apiKey}` },
        { content: message.content, add_special: false },
      );
      const list = at(answer, "tokens");
      if (!Array.isArray(list)) return undefined;
      tokens += list.length + TEMPLATE_TOKENS;
    }
    return tokens;
  }

  private async probe(root: string, model: string): Promise<number | undefined> {
    const headers = { authorization: `Bearer ${this.apiKey}` };
    const props = await getJson(`${root}/props`, headers);
    const slot = positive(at(props, "default_generation_settings", "n_ctx"));
    if (slot !== undefined) return slot;
    const ps = at(await getJson(`${root}/api/ps`, headers), "models");
    if (Array.isArray(ps)) {
      const loaded = ps.find((m) => at(m, "name") === model || at(m, "model") === model);
      return positive(at(loaded, "context_length"));
    }
    return undefined;
  }
}

function getJson(url: string, headers: Record<string, string>): Promise<unknown> {
  return fetchJson(url, { headers });
}

function postJson(url: string, headers: Record<string, string>, body: unknown): Promise<unknown> {
  return fetchJson(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A probe's JSON answer, or undefined for any failure: a probe never throws. */
async function fetchJson(url: string, init: RequestInit): Promise<unknown> {
  try {
    // As the LLM client does: no redirect, so the server cannot bounce the probe elsewhere.
    const response = await fetch(url, {
      ...init,
      redirect: "error",
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    return await response.json();
  } catch {
    return undefined;
  }
}

function at(value: unknown, ...path: string[]): unknown {
  let node = value;
  for (const key of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

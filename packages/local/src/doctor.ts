/**
 * The server's own checks for `GET /v1/doctor` (and `stackvm doctor`): does the
 * LLM answer with each configured model, do the embeddings, does the sandbox run
 * Python inside its boundary. Each check says what to fix when it fails. Only a
 * process that holds these ports can check them: the local stack does; on AWS
 * the API function holds none of them (only the worker does).
 */
import type { DoctorCheck, DoctorRun } from "@stackvm/api";
import {
  DATA_LIBRARIES,
  DATA_VERSIONS_PROBE,
  type EmbeddingPort,
  type LlmConfig,
  type LlmPort,
  type SandboxPort,
} from "@stackvm/core";
import type { Provider } from "@stackvm/functions";

export interface DoctorPorts {
  llm: LlmPort;
  /** Absent where this process has none: the check is `unchecked`. */
  embeddings?: EmbeddingPort;
  sandbox: SandboxPort;
  llmConfig: LlmConfig;
  /** `EMBEDDING_MODEL`. */
  embeddingModel: string;
  /** `OPENAI_BASE_URL`, or null for OpenAI's. */
  baseURL: string | null;
  /** `LLM_PROVIDER` and `EMBEDDING_PROVIDER`; an OpenAI-compatible server when absent. */
  providers?: { llm: Provider; embeddings: Provider };
  /**
   * The reasoning roles' own endpoint (`REASON_*`): its provider and where it is,
   * in the banner's words. Absent or null: they share the steps' endpoint.
   */
  reason?: { provider: Provider; server: string } | null;
}

const REASONING_ROLES: ReadonlySet<string> = new Set(["reason", "eval"]);

/** The endpoint a role's calls go to: the reasoning one for `reason` and `eval`, when there is one. */
function roleEndpoint(ports: DoctorPorts, role: string): { provider: Provider; server: string } {
  if (ports.reason && REASONING_ROLES.has(role)) return ports.reason;
  return { provider: ports.providers?.llm ?? "openai", server: serverOf(ports, "llm") };
}

/** Where the LLM or the embeddings are, in the checks' words. */
const serverOf = (ports: DoctorPorts, which: "llm" | "embeddings") =>
  ports.providers?.[which] === "bedrock" ? "Amazon Bedrock" : (ports.baseURL ?? "OpenAI");

/** What to do about a Bedrock failure, by the adapter's error code. */
function bedrockFix(code: string): string {
  switch (code) {
    case "llm_unreachable":
    case "llm_timeout":
    case "llm_server_error":
    case "llm_bad_response":
    case "llm_rate_limited":
      return "check the network to Bedrock in BEDROCK_REGION (or AWS_ENDPOINT_URL_BEDROCK_RUNTIME) and its quotas, then try again";
    case "llm_forbidden":
      return "enable access to the model in the Bedrock console (Model access, in BEDROCK_REGION) and let these credentials bedrock:InvokeModel on it, then try again";
    case "llm_unauthorized":
    case "llm_no_credentials":
      return "give the process AWS credentials (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), then restart";
    default:
      return "set LLM_MODEL, REASON_LLM_MODEL and EVAL_LLM_MODEL to Bedrock model ids or inference profiles offered in BEDROCK_REGION, then restart";
  }
}

/** The longest one check may take: the doctor answers within a request's time. */
const CHECK_TIMEOUT_MS = 15_000;

/** How the doctor names its own cap in what it says, so that it is not taken for `LLM_TIMEOUT_MS`. */
const capName = (ms: number) => `the doctor's own cap of ${ms / 1000} s per check`;

function errorOf(error: unknown): { code: string; message: string; status?: number } {
  const e = error as { code?: unknown; message?: unknown; details?: { status?: unknown } };
  const status = e.details?.status;
  return {
    code: typeof e.code === "string" ? e.code : "error",
    message: typeof e.message === "string" ? e.message : String(error),
    ...(typeof status === "number" ? { status } : {}),
  };
}

/**
 * What to do about an LLM or embeddings failure, by what the server did: gave
 * no answer (start it), answered slowly (it runs: wait longer), answered 5xx
 * (it runs and failed: its log says why), refused the request (its words say
 * why). Only the first is "start the server".
 */
function llmFix(
  code: string,
  message: string,
  server: string,
  timeoutMs: number,
  capMs = CHECK_TIMEOUT_MS,
): string {
  switch (code) {
    case "llm_not_configured":
    case "embeddings_not_configured":
      return message.replace(/^[^:]*: /, "");
    case "llm_unreachable":
    case "embedding_unreachable":
      return `start the LLM server at ${server}, or point OPENAI_BASE_URL at one that runs (it ends in /v1), then restart`;
    case "llm_timeout":
    case "embedding_timeout":
      return `the server at ${server} runs but did not answer within ${capName(capMs)}; tasks wait up to LLM_TIMEOUT_MS (now ${Math.round(timeoutMs / 1000)} s) per answer: raise LLM_TIMEOUT_MS if your model needs longer, or use a smaller model`;
    case "llm_server_error":
    case "embedding_server_error":
      return `the server at ${server} runs but failed on the request (its words are above): see its own log, e.g. a model that does not load or is out of memory, then try again`;
    case "llm_bad_response":
    case "embedding_bad_response":
      return `the server at ${server} answered something that is not an OpenAI-compatible answer: check that OPENAI_BASE_URL names its OpenAI-compatible API (it ends in /v1)`;
    case "llm_bad_request":
      return `the server at ${server} refused the request (its words are above): check the model names (LLM_MODEL, REASON_LLM_MODEL, EVAL_LLM_MODEL) and the server's own options`;
    case "llm_unauthorized":
    case "llm_forbidden":
    case "llm_quota_exceeded":
      return `set OPENAI_API_KEY to a key that ${server} accepts for this model, then restart`;
    default:
      return `check OPENAI_BASE_URL (${server}), OPENAI_API_KEY and the model names, then restart`;
  }
}

/**
 * What to do about an embeddings server that refused: a server that says how to
 * start it (llama.cpp: "start it with --embeddings") is quoted; a 501 is a
 * server without embeddings; anything else is a model it does not have.
 */
function embeddingRefusalFix(
  message: string,
  status: number | undefined,
  server: string,
  model: string,
): string {
  const flag = /(--[a-z-]*embedding[a-z-]*)/i.exec(message)?.[1];
  if (flag) {
    return `the server at ${server} does not serve embeddings as it was started: restart it with ${flag} (as it says), or point OPENAI_BASE_URL at a server that serves embeddings too; EMBEDDING_MODEL (${model}) is not the cause`;
  }
  if (status === 501) {
    return `the server at ${server} does not implement embeddings (501): run one that does (Ollama with nomic-embed-text, llama.cpp's llama-server with --embeddings), then restart`;
  }
  return `set EMBEDDING_MODEL to an embedding model that ${server} has (e.g. nomic-embed-text on Ollama), then restart`;
}

async function checkModel(
  ports: DoctorPorts,
  model: string,
  served: string[],
  capMs: number,
): Promise<DoctorCheck> {
  const name = "llm";
  const role = served[0] ?? "default";
  const roles = served.join(", ");
  const { provider, server } = roleEndpoint(ports, role);
  const ownServer =
    ports.reason !== undefined && ports.reason !== null && REASONING_ROLES.has(role);
  const started = Date.now();
  const own = capMs < ports.llmConfig.timeoutMs;
  try {
    await ports.llm.complete({
      model,
      role: role as "default" | "reason" | "eval",
      messages: [{ role: "user", content: "Reply with the single word: ok" }],
      // A few tokens prove the server answers; unbounded, one generated 14,525.
      maxOutputTokens: ports.llmConfig.outputTokens.doctor,
      timeoutMs: own ? capMs : ports.llmConfig.timeoutMs,
      ...(own ? { timeoutSetting: capName(capMs) } : {}),
    });
    return {
      name,
      status: "ok",
      detail: `model ${model} (${roles}) answered at ${server} in ${Date.now() - started} ms`,
      fix: null,
    };
  } catch (error) {
    const { code, message } = errorOf(error);
    const detail = `model ${model} (${roles}): ${message}`;
    const fix =
      provider === "bedrock"
        ? bedrockFix(code)
        : llmFix(code, message, server, ports.llmConfig.timeoutMs, capMs);
    // The reasoning server's own settings are the REASON_ ones.
    const named = ownServer
      ? fix.replace(/\b(?<!REASON_)OPENAI_(BASE_URL|API_KEY)/g, "REASON_OPENAI_$1")
      : fix;
    return { name, status: "failed", detail, fix: named };
  }
}

async function checkEmbeddings(ports: DoctorPorts, capMs: number): Promise<DoctorCheck> {
  const name = "embeddings";
  const server = serverOf(ports, "embeddings");
  if (!ports.embeddings) {
    return {
      name,
      status: "unchecked",
      detail: "this process holds no embeddings: the worker does",
      fix: null,
    };
  }
  try {
    const answer = await ports.embeddings.embed({
      model: ports.embeddingModel,
      input: ["stackvm doctor"],
      timeoutMs: capMs,
      timeoutSetting: capName(capMs),
    });
    const size = answer.vectors[0]?.length ?? 0;
    return {
      name,
      status: "ok",
      detail: `model ${ports.embeddingModel} answered at ${server} (${size} dimensions)`,
      fix: null,
    };
  } catch (error) {
    const { code, message, status } = errorOf(error);
    // Only knowledge bases need embeddings: a task without them runs.
    const bedrock = ports.providers?.embeddings === "bedrock";
    const fix =
      code === "embeddings_not_configured"
        ? llmFix(code, message, server, ports.llmConfig.timeoutMs)
        : bedrock
          ? `enable access to ${ports.embeddingModel} in the Bedrock console (Model access, in BEDROCK_REGION), or set EMBEDDING_PROVIDER=openai for an OpenAI-compatible server, then restart`
          : code === "embedding_failed"
            ? embeddingRefusalFix(message, status, server, ports.embeddingModel)
            : llmFix(code, message, server, ports.llmConfig.timeoutMs, capMs);
    return {
      name,
      status: "warning",
      detail: `${message} (only knowledge bases need embeddings)`,
      fix,
    };
  }
}

async function checkSandbox(ports: DoctorPorts): Promise<DoctorCheck> {
  const name = "sandbox";
  try {
    const answer = await ports.sandbox.run({ v: 1, language: "python", code: "6 * 7" });
    if (answer.error === null && answer.result === 42) {
      return {
        name,
        status: "ok",
        detail: "Python ran inside the sandbox's boundary",
        fix: null,
      };
    }
    const message = answer.error?.message ?? `Python answered ${JSON.stringify(answer.result)}`;
    return {
      name,
      status: "failed",
      detail: message,
      fix:
        answer.error?.code === "refused"
          ? "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) and allow user namespaces, then restart"
          : "see the server's log for the sandbox's own lines, then restart",
    };
  } catch (error) {
    return {
      name,
      status: "failed",
      detail: errorOf(error).message,
      fix: "see the server's log for the sandbox's own lines, then restart",
    };
  }
}

/**
 * The data engine's libraries: Python that imports them runs in CPython with
 * Debian's packages. Answers their versions beside the pinned ones; a sandbox
 * without them (or with others) is a warning, since plain Python still runs.
 */
async function checkSandboxData(ports: DoctorPorts): Promise<DoctorCheck> {
  const name = "data libraries";
  const pinned = Object.entries(DATA_LIBRARIES)
    .map(([library, pin]) => `${library} ${pin.version}`)
    .join(", ");
  const fix = `install the pinned packages with scripts/setup-system.sh (${Object.values(
    DATA_LIBRARIES,
  )
    .map((pin) => pin.debian)
    .join(", ")}), then restart`;
  try {
    const answer = await ports.sandbox.run({ v: 1, language: "python", code: DATA_VERSIONS_PROBE });
    if (answer.error !== null) {
      return {
        name,
        status: "warning",
        detail: `Python that imports numpy, pandas, matplotlib or openpyxl cannot run: ${answer.error.message}`,
        fix,
      };
    }
    const found = (answer.result ?? {}) as Record<string, unknown>;
    const versions = Object.keys(DATA_LIBRARIES)
      .map((library) => `${library} ${String(found[library])}`)
      .join(", ");
    const differ = Object.entries(DATA_LIBRARIES).filter(
      ([library, pin]) => found[library] !== pin.version,
    );
    if (differ.length === 0) return { name, status: "ok", detail: versions, fix: null };
    return {
      name,
      status: "warning",
      detail: `the sandbox has ${versions}; pinned: ${pinned}`,
      fix,
    };
  } catch (error) {
    return { name, status: "warning", detail: errorOf(error).message, fix };
  }
}

/**
 * How long a run's answer is given again before the checks run anew. The checks
 * are the server's, not a tenant's, and the LLM check bills the operator: a
 * tenant asking in a loop (40 LLM requests in 6 s, after its month was spent)
 * now costs one run a minute for the whole server.
 */
export const DOCTOR_CACHE_MS = 60_000;

/**
 * Runs every check at once; answers them in a fixed order. Requests that come
 * while a run is under way share it, and for {@link DOCTOR_CACHE_MS} after it
 * they get its answer, marked `cached` with its age: however many tenants ask,
 * the server calls the LLM at most once a minute, and says so.
 */
export function createDoctor(
  ports: DoctorPorts,
  /** `checkTimeoutMs`: the cap on one check (15 s); a test sets a small one. */
  options: { cacheMs?: number; now?: () => number; checkTimeoutMs?: number } = {},
): () => Promise<DoctorRun> {
  const cacheMs = options.cacheMs ?? DOCTOR_CACHE_MS;
  const capMs = options.checkTimeoutMs ?? CHECK_TIMEOUT_MS;
  const now = options.now ?? Date.now;
  let running: Promise<DoctorRun> | null = null;
  let last: { checks: DoctorCheck[]; at: number } | null = null;
  return () => {
    const time = now();
    if (last && time - last.at < cacheMs) {
      return Promise.resolve({
        checks: last.checks,
        checkedAt: last.at,
        ageMs: Math.max(0, time - last.at),
        cached: true,
      });
    }
    running ??= runChecks(ports, capMs)
      .then((checks) => {
        const at = now();
        last = { checks, at };
        return { checks, checkedAt: at, ageMs: 0, cached: false };
      })
      .finally(() => {
        running = null;
      });
    return running;
  };
}

function runChecks(ports: DoctorPorts, capMs: number): Promise<DoctorCheck[]> {
  // Each distinct model on each endpoint once, with the roles it serves there.
  const roles = new Map<string, { model: string; served: string[] }>();
  for (const [role, model] of Object.entries(ports.llmConfig.models)) {
    const key = `${roleEndpoint(ports, role).server} ${model}`;
    const entry = roles.get(key) ?? { model, served: [] };
    entry.served.push(role);
    roles.set(key, entry);
  }
  return Promise.all([
    ...[...roles.values()].map(({ model, served }) => checkModel(ports, model, served, capMs)),
    checkEmbeddings(ports, capMs),
    checkSandbox(ports),
    checkSandboxData(ports),
  ]);
}

/**
 * Configuration, read once at start by each entry file and validated with zod: a
 * wrong or missing setting stops the start with a message naming it.
 */

import {
  DEFAULT_PDF_LIMITS,
  DEFAULT_SEARCH_PRICE_USD,
  DEFAULT_TRACE_RETENTION_DAYS,
  type LlmConfig,
  loadLlmConfig,
  type OpenRange,
  type PdfLimits,
  parseOpenRanges,
  privateTarget,
  runtimeApiPort,
  type WebToolsConfig,
} from "@stackvm/core";
import * as z from "zod";
import {
  DEFAULT_EMBEDDING_MODELS,
  DEFAULT_OLLAMA_BASE_URL,
  defaultLlmModel,
  LLM_PROVIDER_SETTINGS,
  type LlmEndpoint,
  ollamaEndpoint,
  PROVIDERS,
  type ProviderConfig,
  providerConfig,
} from "./llm-provider";
import { type OtelConfig, otelConfig } from "./otel-config";

const Provider = z.enum(PROVIDERS, {
  error: (issue) => `must be ${PROVIDERS.join(" or ")}, not '${String(issue.input)}'`,
});

const SEARCH_PROVIDERS = ["tavily", "brave"] as const;
const SearchProvider = z.enum(SEARCH_PROVIDERS, {
  error: (issue) => `must be ${SEARCH_PROVIDERS.join(" or ")}, not '${String(issue.input)}'`,
});
/** An LLM server's address: http or https (`z.url()` alone takes `host:8080` as a URL of scheme `host`). */
const ServerUrl = z
  .string()
  .url()
  .regex(/^https?:\/\//i, "must be an http:// or https:// URL, e.g. http://127.0.0.1:8080/v1");

const LlmProviderSetting = z.enum(LLM_PROVIDER_SETTINGS, {
  error: (issue) =>
    `must be ${LLM_PROVIDER_SETTINGS.join(", ").replace(/, (?=[^,]*$)/, " or ")}, not '${String(issue.input)}'`,
});
type LlmProviderSetting = z.infer<typeof LlmProviderSetting>;

// Every function builds this schema at its cold start. Each chained check
// (\`.int().min(1).max(9)\`) builds another schema, so the checks of a setting
// go in one \`.check(...)\`: the same checks and messages, a fifth of the work.
const Env = z.object({
  AWS_REGION: z.string().check(z.minLength(1)).default("us-east-1"),
  STACKVM_TABLE: z.string().check(z.minLength(1)),
  STACKVM_QUEUE_URL: z.string().url(),
  STACKVM_DLQ_URL: z.string().url().optional(),
  STACKVM_BUCKET: z.string().check(z.minLength(1)),
  STACKVM_SANDBOX_FUNCTION: z.string().check(z.minLength(1)).optional(),
  STACKVM_SANDBOX_DATA_FUNCTION: z.string().check(z.minLength(1)).optional(),
  STACKVM_KNOWLEDGE_FUNCTION: z.string().check(z.minLength(1)).optional(),
  STACKVM_ADMIN_KEY: z
    .string()
    .check(z.minLength(16, "STACKVM_ADMIN_KEY must be at least 16 characters"))
    .optional(),
  STACKVM_PUBLIC_URL: z.string().url().optional(),
  STACKVM_MAX_PLAN_UPDATES: z.coerce.number().check(z.int(), z.gte(0), z.lte(20)).default(3),
  STACKVM_PLAN_REPAIRS: z.coerce.number().check(z.int(), z.gte(0), z.lte(10)).default(2),
  STACKVM_MAX_BODY_BYTES: z.coerce
    .number()
    .check(z.int(), z.gte(1024))
    .default(1024 * 1024),
  // Requests per second from one source address to the routes without a key.
  STACKVM_ANONYMOUS_RPS: z.coerce.number().check(z.int(), z.gte(1), z.lte(100_000)).default(50),
  // How long an MCP tool call waits for its task before it answers with the task's id
  // (under the API function's 300 s timeout, infra/api.ts).
  STACKVM_MCP_WAIT_SECONDS: z.coerce.number().check(z.int(), z.gte(1), z.lte(280)).default(50),
  // Origins whose pages may call the API from a browser (CORS), comma-separated; parsed below.
  STACKVM_CORS_ORIGINS: z.string().optional(),
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  // Amazon Bedrock with the function's IAM role instead of an OpenAI-compatible server (llm-provider.ts).
  LLM_PROVIDER: LlmProviderSetting.default("openai"),
  // `LLM_PROVIDER=ollama`: Ollama's server (its OpenAI-compatible API is this + /v1).
  OLLAMA_BASE_URL: ServerUrl.optional(),
  // The reasoning roles (plans, plan updates, evaluations) on a server of their own (reasonEndpoint).
  REASON_LLM_PROVIDER: LlmProviderSetting.optional(),
  REASON_OPENAI_BASE_URL: ServerUrl.optional(),
  REASON_OPENAI_API_KEY: z.string().optional(),
  REASON_OLLAMA_BASE_URL: ServerUrl.optional(),
  EMBEDDING_PROVIDER: Provider.optional(),
  BEDROCK_REGION: z.string().check(z.minLength(1)).optional(),
  AWS_ENDPOINT_URL_BEDROCK_RUNTIME: z.string().url().optional(),
  // Each LLM call's prompt and answer, kept this many days (0: none kept).
  STACKVM_LLM_TRACE_RETENTION_DAYS: z.coerce
    .number()
    .check(
      z.int(),
      z.gte(0, "STACKVM_LLM_TRACE_RETENTION_DAYS must be 0 (keep no traces) or more days"),
      z.lte(3650),
    )
    .default(DEFAULT_TRACE_RETENTION_DAYS),
  // Quota defaults per tenant (the operator overrides them per tenant).
  STACKVM_RATE_LIMIT_RPS: z.coerce.number().check(z.int(), z.gte(1), z.lte(100_000)).default(100),
  STACKVM_MAX_RUNNING_TASKS: z.coerce.number().check(z.int(), z.gte(1), z.lte(1_000)).default(10),
  STACKVM_MAX_OPEN_STREAMS: z.coerce.number().check(z.int(), z.gte(1), z.lte(10_000)).default(50),
  STACKVM_MONTHLY_TOKEN_BUDGET: z.coerce.number().check(z.int(), z.gte(0)).optional(),
  STACKVM_MONTHLY_COST_BUDGET_USD: z.coerce.number().check(z.gte(0)).optional(),
  // Finished tasks are deleted this many days after they end (docs/observability.md); unset: kept.
  STACKVM_RETENTION_DAYS: z.coerce.number().check(z.int(), z.gte(1), z.lte(36_500)).optional(),
  /** Bytes of uploaded files a tenant may keep at once (10 GiB); `none`: no limit. */
  STACKVM_FILE_STORAGE_BYTES: z
    .union([z.literal("none"), z.coerce.number().check(z.int(), z.gte(0))])
    .default(10 * 1024 ** 3),
  // Outgoing webhooks: attempts stay within the queue's maxReceiveCount (5).
  // Loopback and private ranges outgoing requests may reach (outbound-policy.ts); none by default.
  STACKVM_OPEN_PRIVATE_RANGES: z.string().optional(),
  STACKVM_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().check(z.int(), z.gte(1), z.lte(5)).default(5),
  STACKVM_WEBHOOK_RETRY_BASE_SECONDS: z.coerce.number().check(z.gte(0), z.lte(3600)).default(30),
  STACKVM_WEBHOOK_TIMEOUT_MS: z.coerce
    .number()
    .check(z.int(), z.gte(100), z.lte(60_000))
    .default(10_000),
  // A running branch that has not moved for this long is re-enqueued by the sweep:
  // two worker timeouts of 180 s (infra/schedules.ts sets it from the timeout).
  STACKVM_STALLED_AFTER_SECONDS: z.coerce.number().check(z.int(), z.gte(1)).default(360),
  // An LLM that cannot be reached fails its task after this long (the retries fit
  // in the queue's 5 receives up to about 5 minutes).
  STACKVM_LLM_UNREACHABLE_SECONDS: z.coerce
    .number()
    .check(z.int(), z.gte(1), z.lte(300))
    .default(60),
  // Whether the deployment has an LLM, for a function that does not get its settings (the
  // API): infra/api.ts sets it from the LLM secrets, so a goal is refused at once without one.
  STACKVM_LLM_CONFIGURED: z.enum(["true", "false"]).optional(),
  // Whether the deployment can make embeddings, for the API, which has no embedding settings:
  // infra/api.ts sets it, so a document upload is refused at once without them.
  STACKVM_EMBEDDINGS_CONFIGURED: z.enum(["true", "false"]).optional(),
  // EventBridge Scheduler (infra/schedules.ts); without them schedules cannot be created.
  STACKVM_SCHEDULE_GROUP: z.string().check(z.minLength(1)).optional(),
  STACKVM_SCHEDULER_ROLE_ARN: z.string().check(z.minLength(1)).optional(),
  STACKVM_SCHEDULER_FUNCTION_ARN: z.string().check(z.minLength(1)).optional(),
  STACKVM_SCHEDULE_DLQ_ARN: z.string().check(z.minLength(1)).optional(),
  // The worker's one-time wakes of waiting branches beyond 15 minutes, in a group of their
  // own (infra/schedules.ts), through the same role and function; without it such a wake
  // is a queue message that hides itself again until due.
  STACKVM_WAKE_GROUP: z.string().check(z.minLength(1)).optional(),
  // Knowledge: the embedding model, where the index lives, the largest multipart upload
  // (Lambda takes request bodies up to 6 MB; larger documents go by presigned URL).
  // Default by provider: text-embedding-3-small, or Titan Text Embeddings v2 on Bedrock.
  EMBEDDING_MODEL: z.string().check(z.minLength(1)).optional(),
  STACKVM_KNOWLEDGE_INDEX: z
    .string()
    .regex(
      /^(s3:\/\/[a-z0-9.-]+(\/.*)?|\/.+)$/,
      "STACKVM_KNOWLEDGE_INDEX must be s3://bucket/prefix or an absolute folder",
    )
    .optional(),
  STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES: z.coerce
    .number()
    .check(z.int(), z.gte(1024), z.lte(1 << 30))
    .default(5 << 20),
  STACKVM_KNOWLEDGE_PDF_MEMORY_MB: z.coerce
    .number()
    .check(z.int(), z.gte(64), z.lte(8192))
    .default(DEFAULT_PDF_LIMITS.memoryMb),
  STACKVM_KNOWLEDGE_PDF_SECONDS: z.coerce
    .number()
    .check(z.int(), z.gte(1), z.lte(900))
    .default(DEFAULT_PDF_LIMITS.timeMs / 1000),
  // The web tools: web_search's provider and its key (a secret, as the LLM's), where it is
  // reached (tests: loopback) and its price per search; web_fetch's bounds per page.
  STACKVM_WEB_SEARCH_PROVIDER: SearchProvider.optional(),
  STACKVM_WEB_SEARCH_API_KEY: z.string().check(z.minLength(1)).optional(),
  STACKVM_WEB_SEARCH_BASE_URL: z.string().url().optional(),
  STACKVM_WEB_SEARCH_PRICE_USD: z.coerce.number().check(z.gte(0), z.lte(10)).optional(),
  STACKVM_WEB_FETCH_MAX_BYTES: z.coerce
    .number()
    .check(z.int(), z.gte(16 * 1024), z.lte(32 << 20))
    .default(2 << 20),
  STACKVM_WEB_FETCH_TIMEOUT_MS: z.coerce
    .number()
    .check(z.int(), z.gte(1000), z.lte(120_000))
    .default(15_000),
});

export interface RuntimeConfig {
  region: string;
  table: string;
  queueUrl: string;
  bucket: string;
  sandboxFunction: string | null;
  /**
   * The data sandbox function (`STACKVM_SANDBOX_DATA_FUNCTION`): Python that
   * imports numpy, pandas, matplotlib or openpyxl runs there; null, and the
   * sandbox function refuses it.
   */
  sandboxDataFunction: string | null;
  /** The knowledge function the worker invokes for searches and ingest (`STACKVM_KNOWLEDGE_FUNCTION`). */
  knowledgeFunction: string | null;
  adminKey: string | null;
  publicUrl: string | null;
  maxPlanUpdates: number;
  planRepairs: number;
  maxBodyBytes: number;
  /** Requests per second from one source address to `/v1/hooks/…` and `/v1/resume/…`. */
  anonymousRequestsPerSecond: number;
  /** How long an MCP tool call waits for its task (`POST /mcp`, STACKVM_MCP_WAIT_SECONDS). */
  mcpWaitSeconds: number;
  /** `STACKVM_CORS_ORIGINS`: the origins whose pages may call the API; empty: none. */
  corsOrigins: string[];
  /** The steps' OpenAI-compatible server (`OPENAI_*`, or Ollama's with `LLM_PROVIDER=ollama`). */
  openai: { apiKey: string | null; baseURL: string | null };
  /** What `LLM_PROVIDER` said: `ollama` is the `openai` provider at `OLLAMA_BASE_URL`. */
  llmProviderSetting: LlmProviderSetting;
  /**
   * The reasoning roles' own endpoint (`REASON_LLM_PROVIDER`, `REASON_OPENAI_BASE_URL`,
   * `REASON_OPENAI_API_KEY`, `REASON_OLLAMA_BASE_URL`); null: they use the steps' endpoint.
   */
  reasonLlm: LlmEndpoint | null;
  /** `LLM_PROVIDER`, `EMBEDDING_PROVIDER` and Bedrock's region and endpoint. */
  providers: ProviderConfig;
  llm: LlmConfig;
  /** Days each LLM call's trace is kept; 0 keeps none. */
  llmTraceRetentionDays: number;
  /** Where OpenTelemetry traces go (`otel-config.ts`); null: not traced. */
  otel: OtelConfig | null;
  quotas: {
    requests_per_second: number;
    max_running_tasks: number;
    max_open_streams: number;
    monthly_token_budget: number | null;
    monthly_cost_budget_usd: number | null;
    retention_days: number | null;
    file_storage_bytes: number | null;
  };
  webhooks: { maxAttempts: number; backoffBaseSeconds: number; timeoutMs: number };
  stalledAfterSeconds: number;
  /** `STACKVM_LLM_UNREACHABLE_SECONDS`: how long an LLM that cannot be reached is retried. */
  llmUnreachableSeconds: number;
  /** `STACKVM_LLM_CONFIGURED` as said by the deployment, or null to judge by the LLM settings here. */
  llmConfigured: boolean | null;
  /** `STACKVM_EMBEDDINGS_CONFIGURED` as said by the deployment, or null when unsaid. */
  embeddingsConfigured: boolean | null;
  /** Knowledge: `EMBEDDING_MODEL`, the index's root (default `s3://{bucket}/knowledge-index`), the upload limit. */
  knowledge: {
    embeddingModel: string;
    /** The embeddings are served on this machine or a private network (`OPENAI_BASE_URL`): they cost nothing. */
    embeddingsLocal: boolean;
    indexUri: string;
    maxUploadBytes: number;
    pdfLimits: PdfLimits;
  };
  /** `STACKVM_OPEN_PRIVATE_RANGES`: the loopback and private ranges the operator opened to outgoing requests. */
  openRanges: OpenRange[];
  /** Ports of this machine's own services that no outgoing request may reach (Lambda's runtime API). */
  ownPorts: number[];
  /** `STACKVM_WEB_SEARCH_*` and `STACKVM_WEB_FETCH_*`: web_search's provider and key, web_fetch's bounds. */
  web: WebToolsConfig;
  /** Where tenants' schedules go on AWS; null when not configured. */
  schedules: ScheduleTarget | null;
  /** Where the worker's one-time wakes go on AWS; null when not configured. */
  wakes: ScheduleTarget | null;
}

/** A schedule group and what its schedules invoke. */
export interface ScheduleTarget {
  group: string;
  roleArn: string;
  functionArn: string;
  dlqArn: string | null;
}

/** Thrown when configuration is wrong; its message names every bad setting. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Reads and checks the environment. Local mode passes defaults for what it owns. */
export function loadConfig(env: Record<string, string | undefined>): RuntimeConfig {
  // Read once per process: zod's compiled fast path would cost more to build than it saves.
  const parsed = Env.safeParse(env, { jitless: true });
  if (!parsed.success) {
    throw new ConfigError(
      `bad configuration: ${parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
    );
  }
  const e = parsed.data;
  const providers = providerConfig(e);
  let otel: OtelConfig | null;
  try {
    otel = otelConfig(env);
  } catch (error) {
    throw new ConfigError(`bad configuration: ${(error as Error).message}`);
  }
  const steps = stepsEndpoint(e);
  const reasonLlm = reasonEndpoint(e);
  if (reasonLlm && reasonLlm.provider !== providers.llm && !env.REASON_LLM_MODEL?.trim()) {
    throw new ConfigError(
      `bad configuration: REASON_LLM_PROVIDER=${reasonLlm.setting} is not LLM_PROVIDER=${e.LLM_PROVIDER}: set REASON_LLM_MODEL to a model the reasoning server has (LLM_MODEL names the steps' model)`,
    );
  }
  const model = env.LLM_MODEL?.trim() || defaultLlmModel(providers.llm);
  if (model === null) {
    throw new ConfigError(
      "bad configuration: LLM_PROVIDER=bedrock needs LLM_MODEL, a Bedrock model id or inference profile enabled in your account, e.g. LLM_MODEL=us.anthropic.claude-3-5-haiku-20241022-v1:0 or LLM_MODEL=amazon.nova-lite-v1:0",
    );
  }
  let openRanges: OpenRange[];
  try {
    openRanges = parseOpenRanges(e.STACKVM_OPEN_PRIVATE_RANGES);
  } catch (error) {
    throw new ConfigError(`bad configuration: ${(error as Error).message}`);
  }
  const corsOrigins = parseCorsOrigins(e.STACKVM_CORS_ORIGINS);
  if (e.STACKVM_WEB_SEARCH_PROVIDER && !e.STACKVM_WEB_SEARCH_API_KEY) {
    throw new ConfigError(
      `bad configuration: STACKVM_WEB_SEARCH_PROVIDER=${e.STACKVM_WEB_SEARCH_PROVIDER} needs STACKVM_WEB_SEARCH_API_KEY, the provider's API key`,
    );
  }
  let llm: LlmConfig;
  try {
    llm = loadLlmConfig({ ...env, LLM_MODEL: model });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return {
    region: e.AWS_REGION,
    table: e.STACKVM_TABLE,
    queueUrl: e.STACKVM_QUEUE_URL,
    bucket: e.STACKVM_BUCKET,
    sandboxFunction: e.STACKVM_SANDBOX_FUNCTION ?? null,
    sandboxDataFunction: e.STACKVM_SANDBOX_DATA_FUNCTION ?? null,
    knowledgeFunction: e.STACKVM_KNOWLEDGE_FUNCTION ?? null,
    adminKey: e.STACKVM_ADMIN_KEY ?? null,
    publicUrl: e.STACKVM_PUBLIC_URL ?? null,
    maxPlanUpdates: e.STACKVM_MAX_PLAN_UPDATES,
    planRepairs: e.STACKVM_PLAN_REPAIRS,
    maxBodyBytes: e.STACKVM_MAX_BODY_BYTES,
    anonymousRequestsPerSecond: e.STACKVM_ANONYMOUS_RPS,
    mcpWaitSeconds: e.STACKVM_MCP_WAIT_SECONDS,
    corsOrigins,
    openai: steps,
    llmProviderSetting: e.LLM_PROVIDER,
    reasonLlm,
    providers,
    llm,
    llmTraceRetentionDays: e.STACKVM_LLM_TRACE_RETENTION_DAYS,
    otel,
    knowledge: {
      embeddingModel: e.EMBEDDING_MODEL ?? DEFAULT_EMBEDDING_MODELS[providers.embeddings],
      embeddingsLocal:
        providers.embeddings === "openai" &&
        steps.baseURL !== null &&
        privateTarget(new URL(steps.baseURL)) !== null,
      indexUri: e.STACKVM_KNOWLEDGE_INDEX ?? `s3://${e.STACKVM_BUCKET}/knowledge-index`,
      maxUploadBytes: e.STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES,
      pdfLimits: {
        ...DEFAULT_PDF_LIMITS,
        memoryMb: e.STACKVM_KNOWLEDGE_PDF_MEMORY_MB,
        timeMs: e.STACKVM_KNOWLEDGE_PDF_SECONDS * 1000,
      },
    },
    quotas: {
      requests_per_second: e.STACKVM_RATE_LIMIT_RPS,
      max_running_tasks: e.STACKVM_MAX_RUNNING_TASKS,
      max_open_streams: e.STACKVM_MAX_OPEN_STREAMS,
      monthly_token_budget: e.STACKVM_MONTHLY_TOKEN_BUDGET ?? null,
      monthly_cost_budget_usd: e.STACKVM_MONTHLY_COST_BUDGET_USD ?? null,
      retention_days: e.STACKVM_RETENTION_DAYS ?? null,
      file_storage_bytes:
        e.STACKVM_FILE_STORAGE_BYTES === "none" ? null : e.STACKVM_FILE_STORAGE_BYTES,
    },
    webhooks: {
      maxAttempts: e.STACKVM_WEBHOOK_MAX_ATTEMPTS,
      backoffBaseSeconds: e.STACKVM_WEBHOOK_RETRY_BASE_SECONDS,
      timeoutMs: e.STACKVM_WEBHOOK_TIMEOUT_MS,
    },
    stalledAfterSeconds: e.STACKVM_STALLED_AFTER_SECONDS,
    llmUnreachableSeconds: e.STACKVM_LLM_UNREACHABLE_SECONDS,
    llmConfigured:
      e.STACKVM_LLM_CONFIGURED === undefined ? null : e.STACKVM_LLM_CONFIGURED === "true",
    embeddingsConfigured:
      e.STACKVM_EMBEDDINGS_CONFIGURED === undefined
        ? null
        : e.STACKVM_EMBEDDINGS_CONFIGURED === "true",
    openRanges,
    ownPorts: [runtimeApiPort(env)].filter((port): port is number => port !== null),
    web: webConfig(e),
    schedules: scheduleTarget(e, e.STACKVM_SCHEDULE_GROUP),
    wakes: scheduleTarget(e, e.STACKVM_WAKE_GROUP),
  };
}

/**
 * `STACKVM_CORS_ORIGINS`: origins as a browser sends them (`scheme://host[:port]`,
 * no path, no trailing slash), comma-separated. `*` is refused: a page's
 * requests carry a key or a stream token, and the operator names who may send them.
 */
export function parseCorsOrigins(raw: string | undefined): string[] {
  const origins = new Set<string>();
  for (const part of (raw ?? "").split(",")) {
    const origin = part.trim();
    if (!origin) continue;
    let url: URL | null = null;
    try {
      url = new URL(origin);
    } catch {
      url = null;
    }
    if (!url || !["http:", "https:"].includes(url.protocol) || url.origin !== origin) {
      throw new ConfigError(
        `bad configuration: STACKVM_CORS_ORIGINS: '${origin.slice(0, 100)}' is not an origin: list origins as a browser sends them, scheme://host[:port] with no path or trailing slash, comma-separated (e.g. https://app.example.com,http://localhost:5173)${origin === "*" ? "; '*' is not accepted: name the sites whose pages may call the API" : ""}`,
      );
    }
    origins.add(origin);
  }
  return [...origins];
}

/** The web tools' settings: a provider only with its key (checked above). */
function webConfig(e: z.infer<typeof Env>): WebToolsConfig {
  const provider = e.STACKVM_WEB_SEARCH_PROVIDER ?? null;
  return {
    search: {
      provider,
      apiKey: e.STACKVM_WEB_SEARCH_API_KEY ?? null,
      baseUrl: e.STACKVM_WEB_SEARCH_BASE_URL ?? null,
      priceUsd:
        e.STACKVM_WEB_SEARCH_PRICE_USD ?? (provider ? DEFAULT_SEARCH_PRICE_USD[provider] : 0),
    },
    fetch: { maxBytes: e.STACKVM_WEB_FETCH_MAX_BYTES, timeoutMs: e.STACKVM_WEB_FETCH_TIMEOUT_MS },
  };
}

/**
 * The steps' OpenAI-compatible server: `OPENAI_BASE_URL` and `OPENAI_API_KEY`, or
 * with `LLM_PROVIDER=ollama` Ollama's endpoint at `OLLAMA_BASE_URL` (default
 * http://127.0.0.1:11434) + `/v1`. Both base URLs at once is refused: which one is meant?
 */
function stepsEndpoint(e: z.infer<typeof Env>): { apiKey: string | null; baseURL: string | null } {
  if (e.LLM_PROVIDER !== "ollama") {
    return { apiKey: e.OPENAI_API_KEY ?? null, baseURL: e.OPENAI_BASE_URL ?? null };
  }
  const baseURL = ollamaEndpoint(e.OLLAMA_BASE_URL ?? DEFAULT_OLLAMA_BASE_URL);
  if (e.OPENAI_BASE_URL !== undefined && ollamaEndpoint(e.OPENAI_BASE_URL) !== baseURL) {
    throw new ConfigError(
      `bad configuration: LLM_PROVIDER=ollama takes its server from OLLAMA_BASE_URL (${baseURL}), but OPENAI_BASE_URL is set too (${e.OPENAI_BASE_URL}): unset OPENAI_BASE_URL, or set LLM_PROVIDER=openai to use it`,
    );
  }
  return { apiKey: e.OPENAI_API_KEY ?? null, baseURL };
}

/**
 * The reasoning roles' own endpoint when any `REASON_*` endpoint setting is set,
 * else null (they share the steps'). Its key is never the steps' `OPENAI_API_KEY`:
 * one server's key is not sent to another.
 */
function reasonEndpoint(e: z.infer<typeof Env>): LlmEndpoint | null {
  const { REASON_LLM_PROVIDER, REASON_OPENAI_BASE_URL, REASON_OPENAI_API_KEY } = e;
  if (
    REASON_LLM_PROVIDER === undefined &&
    REASON_OPENAI_BASE_URL === undefined &&
    REASON_OPENAI_API_KEY === undefined &&
    e.REASON_OLLAMA_BASE_URL === undefined
  ) {
    return null;
  }
  const setting: LlmProviderSetting =
    REASON_LLM_PROVIDER ?? (e.REASON_OLLAMA_BASE_URL !== undefined ? "ollama" : "openai");
  if (setting === "bedrock") {
    return { provider: "bedrock", setting, openai: { apiKey: null, baseURL: null } };
  }
  const apiKey = REASON_OPENAI_API_KEY ?? null;
  if (setting === "ollama") {
    const base = e.REASON_OLLAMA_BASE_URL ?? e.OLLAMA_BASE_URL ?? DEFAULT_OLLAMA_BASE_URL;
    return { provider: "openai", setting, openai: { apiKey, baseURL: ollamaEndpoint(base) } };
  }
  if (REASON_OPENAI_BASE_URL === undefined && apiKey === null) {
    throw new ConfigError(
      "bad configuration: the reasoning roles go to OpenAI's API (REASON_OPENAI_BASE_URL is not set) without a key: set REASON_OPENAI_API_KEY, or REASON_OPENAI_BASE_URL to your server (it ends in /v1)",
    );
  }
  return {
    provider: "openai",
    setting,
    openai: { apiKey, baseURL: REASON_OPENAI_BASE_URL ?? null },
  };
}

/** The group's target when the group, the role and the function are all set. */
function scheduleTarget(e: z.infer<typeof Env>, group: string | undefined): ScheduleTarget | null {
  if (!group || !e.STACKVM_SCHEDULER_ROLE_ARN || !e.STACKVM_SCHEDULER_FUNCTION_ARN) return null;
  return {
    group,
    roleArn: e.STACKVM_SCHEDULER_ROLE_ARN,
    functionArn: e.STACKVM_SCHEDULER_FUNCTION_ARN,
    dlqArn: e.STACKVM_SCHEDULE_DLQ_ARN ?? null,
  };
}

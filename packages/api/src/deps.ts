/**
 * What the API needs, built by the entry file (Lambda or local) from adapters.
 */
import type {
  ApiKeyService,
  BranchService,
  FileService,
  KnowledgeService,
  LlmTraceService,
  Log,
  NamespaceService,
  QuotaService,
  Retention,
  RetryService,
  ScheduleService,
  StreamLeases,
  StreamTokens,
  TaskEvents,
  TaskService,
  TemplateService,
  ThreadService,
  Tool,
  ToolSourceService,
  TriggerService,
  WaitService,
  WebhookService,
} from "@stackvm/core";

export interface ApiConfig {
  /** The operator key that opens `/v1/admin/*` (STACKVM_ADMIN_KEY); admin routes answer 403 without it. */
  adminKey: string | null;
  /** Local mode: loopback webhook URLs are allowed. */
  localMode: boolean;
  /** The public base URL of the API, for links such as trigger URLs. */
  publicUrl: string | null;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  /** Largest document upload, in bytes (default: `maxBodyBytes`). */
  maxUploadBytes?: number;
  /** Requests per second from one source address to the routes without a key (default 50). */
  anonymousRequestsPerSecond?: number;
  /** How long an MCP tool call waits for its task before it answers with the task's id (default 50 s). */
  mcpWaitMs?: number;
  /** Origins whose pages may call the API (`STACKVM_CORS_ORIGINS`); none: no CORS headers. */
  corsOrigins?: readonly string[];
}

/** One check of `GET /v1/doctor`, with what to fix when it did not pass. */
export interface DoctorCheck {
  name: string;
  status: "ok" | "warning" | "failed" | "unchecked";
  detail: string;
  fix: string | null;
}

/** One answer of the doctor: its checks, when they ran, and whether they are an earlier run's. */
export interface DoctorRun {
  checks: DoctorCheck[];
  /** When the checks ran (ms since the epoch). */
  checkedAt: number;
  /** How old the checks are now, in ms (0 for a run made for this request). */
  ageMs: number;
  /** True when an earlier run's checks are given again (the doctor runs at most once a minute). */
  cached: boolean;
}

export interface ApiDeps {
  tasks: TaskService;
  /** Conversations: `POST /v1/tasks/{id}/continue`, `/v1/threads`, a chat completion's thread. */
  threads: ThreadService;
  branches: BranchService;
  /** `POST /v1/tasks/{id}/retry`. */
  retries: RetryService;
  /** The prompts and answers of LLM calls (`.../llm-calls/{n}`). */
  llmTraces: LlmTraceService;
  namespaces: NamespaceService;
  keys: ApiKeyService;
  triggers: TriggerService;
  schedules: ScheduleService;
  webhooks: WebhookService;
  quotas: QuotaService;
  templates: TemplateService;
  events: TaskEvents;
  /** Open streams per tenant (`max_open_streams`): the events stream and chat completions. */
  streams: StreamLeases;
  /** Short-lived read tokens of one task (`POST /v1/tasks/{id}/stream-token`, `?token=`). */
  streamTokens: StreamTokens;
  waits: WaitService;
  /** `keep` on a task (retention). */
  retention: Pick<Retention, "keep">;
  tools: ReadonlyMap<string, Tool>;
  /** A namespace's HTTP tools and MCP servers. */
  toolSources: ToolSourceService;
  /** A tenant's files (`/v1/files`), passed to tasks by reference. */
  files: FileService;
  /** Knowledge bases and documents; absent where no knowledge index is configured. */
  knowledge?: KnowledgeService;
  config: ApiConfig;
  log: Log;
  /** The checks of the LLM, embeddings and sandbox, where this process holds them (the local stack). */
  doctor?: () => Promise<DoctorRun>;
}

/**
 * @stackvm/core: the plan language, the VM, the commit model, the ports. No vendor
 * imports (enforced by biome.json).
 */

export {
  ConflictError,
  classifyFailure,
  ForbiddenError,
  isErrorKind,
  MalformedError,
  NotFoundError,
  RateLimitedError,
  RetryableError,
  StackVMError,
  StepError,
  TooLargeError,
  UnauthorizedError,
  ValidationError,
} from "./errors";
export type { FileService } from "./files/file-service";
export type { FileInfo } from "./files/records";
export { sha256Hex } from "./ids";
export { loadJsonSchemaCompiler } from "./json-schema/compile";
export {
  checkIndexName,
  cosine,
  createEmbedder,
  DEFAULT_EMBEDDING_MODEL,
  DEFAULT_PDF_LIMITS,
  failDeadIngest,
  type IndexHit,
  type IndexRow,
  type IndexSearch,
  type IngestBudget,
  IngestMessage,
  type IngestPort,
  IngestService,
  type KnowledgeBase,
  KnowledgeBaseInput,
  type KnowledgeDocument,
  type KnowledgeIndex,
  KnowledgeMemory,
  type KnowledgePort,
  KnowledgeSearch,
  type KnowledgeSearchPort,
  KnowledgeService,
  type PdfLimits,
} from "./knowledge";
export { lazyPort } from "./lazy-port";
export { LlmConfig, loadLlmConfig } from "./llm/config";
export { createLlmSession } from "./llm/session";
export { isStrictJsonSchema } from "./llm/strict-schema";
export { DEFAULT_TRACE_RETENTION_DAYS, LLM_TRACE_ROOT } from "./llm/trace";
export type { LlmBudget, TokenEvent } from "./llm/types";
export { loadOnce } from "./load-once";
export type { Branch, Commit, Diff, Retrying, RunningGroup, State, Task } from "./model";
export { guardedFetch } from "./net/guarded-fetch";
export { isLoopbackHost } from "./net/host-allow-list";
export { privateTarget } from "./net/local-url";
export type { OpenRange } from "./net/outbound-policy";
export {
  CLOSED_POLICY,
  LOOPBACK_OPENED,
  parseOpenRanges,
  runtimeApiPort,
} from "./net/outbound-policy";
export type { Resolver } from "./net/resolver";
export { PlanCompat } from "./plan/compat-mode";
export { findGroups } from "./plan/groups";
export { shapeProblem } from "./plan/json-shape";
export { planInputs } from "./plan/plan-inputs";
export type { PlanProblem } from "./plan/problems";
export { lazyPlanner } from "./planning/lazy-planner";
export type { BlobRef, Blobs } from "./ports/blobs";
export { blobKey, checkPrefix, presignSeconds } from "./ports/blobs";
export type { Clock } from "./ports/clock";
export { systemClock } from "./ports/clock";
export type { EmbeddingPort, EmbeddingRequest, EmbeddingResponse } from "./ports/embeddings";
export type {
  Changes,
  Condition,
  GetOptions,
  Item,
  ItemKey,
  ItemStore,
  Query,
  QueryPage,
  UpdateOptions,
} from "./ports/item-store";
export type { LlmMessage, LlmPort, LlmRequest, LlmResponse } from "./ports/llm";
export type { Log } from "./ports/log";
export { silentLog } from "./ports/log";
export type { Queue, QueueSendOptions, ReceivedMessage } from "./ports/queue";
export { queueMessageText, visibilitySeconds } from "./ports/queue";
export type { SandboxPort } from "./ports/sandbox";
export type { DueRun, SchedulerPort, ScheduleTimer } from "./ports/scheduler";
// Tool sources of a namespace: HTTP tools and MCP servers (issue 14).
export type { SecretBox, SecretContext } from "./ports/secrets";
export type { SpanAttributes, Tracer, TraceSpan } from "./ports/tracer";
export { taskTraceContext } from "./ports/tracer";
export type { DocumentUploads } from "./ports/uploads";
export type { Wake, WakePort } from "./ports/wake";
export { DATA_LIBRARIES, DATA_VERSIONS_PROBE } from "./sandbox/data-libraries";
export type { ApiKeyInfo, NewApiKey } from "./service/api-keys";
export { ApiKeyService } from "./service/api-keys";
export { BranchService } from "./service/branches";
export type { CronReader } from "./service/cron";
export { cronReader, parseCron } from "./service/cron";
export { decodeEventId } from "./service/event-ids";
export { TaskEvents } from "./service/events";
export type { TaskEndHook } from "./service/lifecycle";
export { LlmCallTrace, LlmTraceService } from "./service/llm-traces";
export type { Namespace } from "./service/namespace-input";
export { NamespaceService } from "./service/namespaces";
export { QuotaOverrides, QuotaService, TenantQuotas } from "./service/quotas";
export type { Retention } from "./service/retention";
export { RetryInput, RetryService } from "./service/retry";
export { RunningSlots } from "./service/running-slots";
export type { Schedule } from "./service/schedule-input";
export type { RunOutcome } from "./service/schedules";
export { ScheduleService } from "./service/schedules";
export { StreamLeases } from "./service/stream-leases";
export {
  STREAM_TOKEN_DEFAULT_SECONDS,
  STREAM_TOKEN_MAX_SECONDS,
  STREAM_TOKEN_MIN_SECONDS,
  StreamTokens,
} from "./service/stream-tokens";
export type { SweepDeps } from "./service/sweep";
export { sweepStalled } from "./service/sweep";
export type { CreateTaskInput } from "./service/task-input";
export type { StartedTask } from "./service/task-starter";
export { START_REPAIR_AFTER_MS } from "./service/task-starts";
export { TaskService } from "./service/tasks";
export { Template } from "./service/template-record";
export type { TemplateService } from "./service/templates";
export type { ThreadService } from "./service/threads";
export { ToolSourceService } from "./service/tool-sources";
export { CreateTriggerInput, Trigger, TriggerService } from "./service/triggers";
export type { UsageReport } from "./service/usage-report";
export { WaitService } from "./service/waits";
export { WebhookService } from "./service/webhooks";
export type { HeldValue } from "./store/held-result-store";
export { HeldResultStore } from "./store/held-result-store";
export {
  checkChanges,
  checkCondition,
  checkItem,
  checkKey,
  checkQuery,
  decodeCursor,
  encodeCursor,
  itemSize,
  mergeUpdated,
  positionOf,
} from "./store/item-rules";
export { EXPIRY_INDEX_PK, taskPk } from "./store/keys";
export { KnowledgeStore } from "./store/knowledge-store";
export type { BranchRecord, CommitRecord } from "./store/records";
export { TaskStore } from "./store/task-store";
export { taskBlobPrefix } from "./store/values";
export { CodeToolDefinition, codeTool } from "./tools/code-tool";
export { knowledgeTools } from "./tools/knowledge";
export { llmGenerateTool } from "./tools/llm-generate";
export { builtinTools } from "./tools/registry";
export { AesSecretBox } from "./tools/sources/aes-secret-box";
export { HttpToolDefinition } from "./tools/sources/http-tool";
export type {
  McpCallResult,
  McpClient,
  McpConnection,
  McpToolInfo,
} from "./tools/sources/mcp-shapes";
export type { Tool } from "./tools/tool";
export type { WebToolsConfig } from "./tools/web";
export { DEFAULT_SEARCH_PRICE_USD } from "./tools/web/web-search";
export { afterStepFailure } from "./vm/after-failure";
export { deadLetterReason, endDeadLetteredBranch } from "./vm/dead-letter";
export { carryTraceContext, enqueueNext, sendWake } from "./vm/enqueue";
export { runMember } from "./vm/member";
export { MemberMessage, memberStep, StepMessage, WebhookMessage } from "./vm/message";
export type { UnreadableMessage } from "./vm/queue-message";
export { parseQueueMessage } from "./vm/queue-message";
export { runStep } from "./vm/step";
// The step protocol, the store and the services (VM engineer).
export type { StepDeps, TerminalHook } from "./vm/step-deps";
// One wiring of the services, for the functions and the test systems alike.
export { wireApiServices } from "./wiring/api-services";
export type { WiringOptions, WiringPorts } from "./wiring/options";
export { wireStepServices } from "./wiring/step-services";

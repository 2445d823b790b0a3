/**
 * @stackvm/core: the plan language, the VM, the commit model, the ports. No vendor
 * imports (enforced by biome.json).
 */

export type { ErrorKind, FailureDecision } from "./errors";
export {
  BudgetExceededError,
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
export { digest, newTaskId, randomId, sha256Hex } from "./ids";
export {
  compileJsonSchema,
  jsonSchemaCompilerLoaded,
  loadJsonSchemaCompiler,
} from "./json-schema/compile";
export {
  answerKnowledge,
  type Chunk,
  type ChunkHit,
  checkIndexName,
  chunkText,
  cosine,
  createEmbedder,
  DEFAULT_EMBEDDING_MODEL,
  DEFAULT_PDF_LIMITS,
  DocumentId,
  type Embedder,
  ExtractError,
  extractText,
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
  KnowledgeBaseName,
  type KnowledgeDocument,
  type KnowledgeIndex,
  type KnowledgePort,
  KnowledgeReply,
  KnowledgeRequest,
  KnowledgeSearch,
  type KnowledgeSearchPort,
  KnowledgeService,
  knowledgeClient,
  type PdfLimits,
  type Upload,
} from "./knowledge";
export {
  DEFAULT_LLM_PRICES,
  DEFAULT_OUTPUT_TOKENS,
  LlmConfig,
  LlmPrice,
  LlmPrices,
  loadLlmConfig,
  OUTPUT_PURPOSES,
  type OutputPurpose,
} from "./llm/config";
export { costUsd, priceOf } from "./llm/cost";
export type { ExtractedJson } from "./llm/extract-json";
export { extractJson } from "./llm/extract-json";
export { isStrictJsonSchema, toLlmJsonSchema } from "./llm/json-schema";
export type { RetryPolicy } from "./llm/retry";
export { withRetries } from "./llm/retry";
export { createLlmSession } from "./llm/session";
export type { LlmSessionDeps } from "./llm/session-deps";
export type { LlmTrace, TraceSink } from "./llm/trace";
export {
  DEFAULT_TRACE_RETENTION_DAYS,
  LLM_TRACE_ROOT,
  llmTracePrefix,
  REDACTED,
  redactSecrets,
} from "./llm/trace";
export type {
  BudgetLeft,
  GenerateOptions,
  JsonOptions,
  LlmBudget,
  LlmRole,
  LlmSession,
  TokenEvent,
  TokenSink,
  TokenTarget,
} from "./llm/types";
export {
  Branch,
  BranchName,
  Budget,
  Commit,
  CommitType,
  Diff,
  LlmCall,
  LlmPurpose,
  NamespaceConfig,
  ResponseFormat,
  Retrying,
  RunningGroup,
  SlotWait,
  State,
  Status,
  Task,
  TaskWebhook,
  TERMINAL_STATUSES,
  Usage,
  Waiting,
  WebhookDelivery,
  ZERO_USAGE,
} from "./model";
export type { AddressPolicy } from "./net/address-guard";
export { assertAddressAllowed, forbiddenAddressReason, guardedLookup } from "./net/address-guard";
export type { GuardedFetchOptions, GuardedRequest, GuardedResponse } from "./net/guarded-fetch";
export {
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  guardedFetch,
} from "./net/guarded-fetch";
export {
  hostPatternProblem,
  isLoopbackHost,
  matchHost,
  normalizeHost,
} from "./net/host-allow-list";
export { localUrlProblem, privateTarget, urlPort } from "./net/local-url";
export type { OpenRange, OutboundPolicy } from "./net/outbound-policy";
export {
  CLOSED_POLICY,
  LOOPBACK_OPENED,
  METADATA_ADDRESSES,
  parseOpenRanges,
  runtimeApiPort,
} from "./net/outbound-policy";
export type { Resolver } from "./net/resolver";
export { systemResolver } from "./net/resolver";
export { webhookTargetCheck, webhookUrlCheck } from "./net/webhook-url";
export {
  evaluateArithmetic,
  MAX_ARITHMETIC_DEPTH,
  MAX_ARITHMETIC_LENGTH,
} from "./plan/arithmetic";
export { PlanCompat } from "./plan/compat-mode";
export {
  DEFAULT_GROUP_WIDTH,
  findGroups,
  groupRunAt,
  MAX_GROUP_WIDTH,
  type PlanGroup,
} from "./plan/groups";
export type { ShapeProblem } from "./plan/json-shape";
export { FORBIDDEN_KEYS, MAX_JSON_DEPTH, shapeProblem } from "./plan/json-shape";
export type { PlanProblem } from "./plan/problems";
export type { Lookup, Reference } from "./plan/references";
export {
  findReferences,
  lookupVariables,
  MAX_VALUE_DEPTH,
  resolveReferences,
} from "./plan/references";
export { FINAL_ANSWER, Instruction, MAX_PLAN_LENGTH, Plan } from "./plan/schema";
export type { ToolInput } from "./plan/tool-check";
export type { ValidationContext, ValidationResult } from "./plan/validate";
export { validatePlan } from "./plan/validate";
export type { PlannerDeps, TemplateMatch } from "./planning/planner";
export { createPlanner, PlanAnswer, PlanUpdateAnswer } from "./planning/planner";
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
export { type SecretBox, type SecretContext, secretContextText } from "./ports/secrets";
export type { DocumentUploads } from "./ports/uploads";
export type { Wake, WakePort } from "./ports/wake";
export type { ParsedSandboxRequest } from "./sandbox/protocol";
export {
  DEFAULT_SANDBOX_LIMITS,
  isInputVariable,
  MAX_CODE_CHARS,
  requestedSandboxLimits,
  resolveSandboxLimits,
  SANDBOX_PROTOCOL_VERSION,
  SandboxError,
  SandboxErrorCode,
  SandboxFile,
  SandboxLanguage,
  SandboxLimits,
  SandboxLimitsRequest,
  SandboxOutputFile,
  SandboxRequest,
  SandboxResponse,
  sandboxError,
  sandboxFailure,
} from "./sandbox/protocol";
export type { ApiKeyInfo, NewApiKey } from "./service/api-keys";
export { ApiKeyService, TenantId } from "./service/api-keys";
export { BranchService } from "./service/branches";
export type { CronFields, CronReader } from "./service/cron";
export {
  checkTimeZone,
  cronReader,
  isTimeZone,
  nextRunAt,
  parseCron,
} from "./service/cron";
export type { EvaluationHookDeps } from "./service/evaluation";
export {
  bestJudged,
  createEvaluator,
  EvaluationAnswer,
  evaluationHook,
  evaluationMessages,
  MAX_EVALUATION_ROUNDS,
} from "./service/evaluation";
export { decodeEventId, type EventCursor, encodeEventId } from "./service/event-ids";
export type { PollResult, TaskEvent, TaskEventsDeps } from "./service/events";
export { TaskEvents } from "./service/events";
export { ForkInput } from "./service/fork-input";
export type { Lifecycle } from "./service/lifecycle";
export { taskLifecycle } from "./service/lifecycle";
export { LlmCallTrace, LlmTraceService } from "./service/llm-traces";
export { monthMeter } from "./service/month-meter";
export type { CodeToolRecord } from "./service/namespaces";
export {
  createNamespaces,
  Namespace,
  NamespaceInput,
  NamespaceName,
  NamespaceService,
} from "./service/namespaces";
export { addUsage, Presenter } from "./service/present";
export type { MonthUsage, QuotaServiceDeps, TaskAdmission } from "./service/quotas";
export {
  DEFAULT_QUOTAS,
  QuotaOverrides,
  QuotaService,
  quotaBranchEndHook,
  quotaTerminalHook,
  TenantQuotas,
  taskAdmission,
} from "./service/quotas";
export { RETRY_FROM, RetryInput, RetryService } from "./service/retry";
export type { RunningSlotsDeps } from "./service/running-slots";
export { RunningSlots } from "./service/running-slots";
export { CreateScheduleInput, Schedule, UpdateScheduleInput } from "./service/schedule-input";
export type { RunOutcome, ScheduleServiceDeps } from "./service/schedules";
export { ScheduleService } from "./service/schedules";
export { stableJson } from "./service/stable-json";
export type { StreamLease, StreamLeasesDeps } from "./service/stream-leases";
export { StreamLeases } from "./service/stream-leases";
export type { SweepDeps } from "./service/sweep";
export { sweepStalled } from "./service/sweep";
export { CreateTaskInput } from "./service/task-input";
export { markRunning, newBranch } from "./service/task-records";
export {
  MAX_METADATA_BYTES,
  MAX_PLAN_BYTES,
  MAX_RESPONSE_FORMAT_BYTES,
} from "./service/task-sizes";
export { START_REPAIR_AFTER_MS } from "./service/task-starts";
export type { TaskServiceDeps } from "./service/tasks";
export { TaskService } from "./service/tasks";
export type { TemplateServiceDeps } from "./service/templates";
export {
  goalSimilarity,
  normalizeGoal,
  SIMILARITY_THRESHOLD,
  Template,
  TemplateService,
} from "./service/templates";
export type { TokenCursor } from "./service/token-relay";
export { TokenRelay, WATCH_REFRESH_MS } from "./service/token-relay";
export type { ToolSourceServiceDeps } from "./service/tool-sources";
export { ToolSourceService } from "./service/tool-sources";
export type { TriggerServiceDeps } from "./service/triggers";
export {
  CreateTriggerInput,
  DELIVERY_TTL_SECONDS,
  Trigger,
  TriggerService,
} from "./service/triggers";
export type { WaitServiceDeps } from "./service/waits";
export { WaitService } from "./service/waits";
export type { WebhookServiceDeps } from "./service/webhooks";
export { WebhookService } from "./service/webhooks";
export { ApiKeyStore } from "./store/api-key-store";
export {
  checkChanges,
  checkCondition,
  checkItem,
  checkKey,
  checkQuery,
  compareUtf8,
  decodeCursor,
  encodeCursor,
  itemSize,
  MAX_ITEM_BYTES,
  mergeUpdated,
  positionOf,
} from "./store/item-rules";
export {
  branchKey,
  commitId,
  parseCommitId,
  SWEEP_SHARDS,
  sweepIndex,
  taskKey,
  taskPk,
  tenantPk,
} from "./store/keys";
export { KnowledgeStore } from "./store/knowledge-store";
export { LiveTextStore } from "./store/live-text-store";
export { NamespaceStore } from "./store/namespace-store";
export { QuotaStore } from "./store/quota-store";
export type {
  AnswerSource,
  BranchConfig,
  BranchRecord,
  CommitRecord,
  PendingWork,
  RetryingRecord,
  TaskRecord,
  WaitingRecord,
} from "./store/records";
export { ScheduleStore } from "./store/schedule-store";
export { SlotStore } from "./store/slot-store";
export { createStores, type Stores } from "./store/stores";
export { StreamLeaseStore } from "./store/stream-lease-store";
export { SweepIndex } from "./store/sweep-index";
export { unfinishedStarts } from "./store/task-starts";
export { TaskStore } from "./store/task-store";
export { TemplateStore } from "./store/template-store";
export { TriggerStore } from "./store/trigger-store";
export type { StoredRef } from "./store/values";
export { INLINE_LIMIT, isStoredRef, jsonSize, loadValue, taskBlobPrefix } from "./store/values";
export { WebhookStore } from "./store/webhook-store";
export { checkSandboxCode } from "./tools/code-check";
export type { CodeAttempt, CodeTaskOptions } from "./tools/code-task";
export {
  CodeAnswer,
  CodeTaskInput,
  codeTaskTool,
  createCodeTaskTool,
  DEFAULT_FIX_ROUNDS,
} from "./tools/code-task";
export { CodeToolDefinition, codeTool, codeToolSource } from "./tools/code-tool";
export type { HttpRequestToolOptions } from "./tools/http-request";
export { createHttpRequestTool, HttpRequestInput, httpRequestTool } from "./tools/http-request";
export { knowledgeTools } from "./tools/knowledge";
export { asksForJson, LlmGenerateInput, llmGenerateTool, taskLanguage } from "./tools/llm-generate";
export { prepareTools } from "./tools/prepare";
export type {
  NamespaceTools,
  ResolvedTools,
  ToolDescription,
  ToolRecord,
  ToolSource,
} from "./tools/registry";
export { builtinTools, describeTool, resolveTools, ToolRegistry } from "./tools/registry";
export { RunCodeInput, runCodeTool } from "./tools/run-code";
export type { SandboxCall, SandboxRecord, SandboxRun, StoredFile } from "./tools/sandbox-call";
export { callSandbox, sandboxFailureError } from "./tools/sandbox-call";
export { AesSecretBox } from "./tools/sources/aes-secret-box";
export type { HttpToolDeps } from "./tools/sources/http-tool";
export { HttpToolDefinition, httpToolSource } from "./tools/sources/http-tool";
export type { McpSourceDeps } from "./tools/sources/mcp";
export { mcpToolSource } from "./tools/sources/mcp";
export {
  DEFAULT_MCP_CALL_LIMITS,
  McpCallLimiter,
  type McpCallLimits,
} from "./tools/sources/mcp-limits";
export type {
  McpCallResult,
  McpClient,
  McpConnection,
  McpContent,
  McpToolInfo,
} from "./tools/sources/mcp-shapes";
export { McpServer, McpServerDefinition } from "./tools/sources/mcp-shapes";
export type { Tool, ToolContext, ToolResult, ToolSourceKind } from "./tools/tool";
export type { StepDelivery } from "./vm/after-failure";
export { afterStepFailure } from "./vm/after-failure";
export { deadLetterReason, endDeadLetteredBranch } from "./vm/dead-letter";
export { enqueueNext, sendWake } from "./vm/enqueue";
export type { EvaluateInput, Evaluator, Verdict } from "./vm/evaluator-port";
export { executeInstruction, firstJsonObject, JmpCondition, mapOutputs } from "./vm/execute";
export { chainDepths, lowbit, nextChain } from "./vm/fenwick";
export { goalText, normalizeFormat, parseTrailingFormat } from "./vm/goal-text";
export { branchGroupId, StepMessage, WebhookMessage } from "./vm/message";
export { MAX_STEP_OUTPUT_BYTES, MAX_VARIABLE_BYTES } from "./vm/output-limits";
export type { PlanInput, Planner, PlanResult, ReplanInput } from "./vm/planner-port";
export type {
  ParsedQueueMessage,
  QueueMessage,
  QueueMessageKind,
  UnreadableMessage,
} from "./vm/queue-message";
export { parseQueueMessage } from "./vm/queue-message";
export {
  boundCommit,
  COMMIT_BYTES,
  failRefusedStep,
  isStoreRefusal,
  refusalFailure,
} from "./vm/record-bounds";
export {
  DEFAULT_LLM_UNREACHABLE_MS,
  isLlmUnreachable,
  recordRetry,
  retryDelaySeconds,
} from "./vm/retrying";
export type { StoredState } from "./vm/state";
export { readState, stateFromCommit, stateValues } from "./vm/state";
export type { StepOutcome } from "./vm/step";
export { runStep } from "./vm/step";
// The step protocol, the store and the services (VM engineer).
export type { StepDeps, TerminalHook } from "./vm/step-deps";
export { budgetLeft } from "./vm/step-session";
export { loadVariables, storedVariables } from "./vm/variables";

export { SQS_DELAY_LIMIT_SECONDS } from "./vm/wait";
export type { WebhookHeaders } from "./webhooks/signature";
export {
  newWebhookSecret,
  SECRET_PREFIX,
  signWebhook,
  TIMESTAMP_TOLERANCE_SECONDS,
  verifyWebhook,
  webhookHeaders,
} from "./webhooks/signature";

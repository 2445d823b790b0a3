/**
 * The consumers of the queues: the worker, which runs one step per message,
 * and the DLQ consumer, which marks the branch of a message that kept failing
 * as `failed` with the reason, so no branch is left `running`.
 *
 * Both return partial batch responses (`processPartialResponse`), so one bad
 * message does not send its neighbours back to the queue.
 */
import { workerBedrockPermissions } from "./bedrock";
import { knowledge } from "./knowledge";
import { observabilityEnvironment } from "./observability";
import { deadLetterQueue, llmTimeoutMsWithin, queue, workerTimeoutSeconds } from "./queue";
import { sandbox } from "./sandbox";
import { sandboxData, sandboxDataFunction } from "./sandbox-data";
import { wakeEnvironment, wakePermissions } from "./schedules";
import {
  llmEnvironment,
  llmSecrets,
  reasonLlmEnvironment,
  reasonLlmSecrets,
  webSearchEnvironment,
  webSearchSecrets,
  withoutEmpty,
} from "./secrets";
import { bucket, llmTraceEnvironment, table } from "./storage";
import { toolSecretsEnvironment, toolSecretsOpenPermissions } from "./tool-secrets";

/** The LLM secrets the worker reads: all but the embedding model, which only knowledge uses. */
const { embeddingModel: _embeddingModel, ...workerSecrets } = llmSecrets;
const workerLlmSecrets = [...Object.values(workerSecrets), ...Object.values(reasonLlmSecrets)];
const { EMBEDDING_MODEL: _embeddingEnv, ...workerLlmEnvironment } = llmEnvironment;

/** The queue's subscription; its function is the worker. */
export const workerSubscription = queue.subscribe(
  {
    handler: "packages/functions/src/worker.handler",
    timeout: `${workerTimeoutSeconds} seconds`,
    memory: "1024 MB",
    // Knowledge (LanceDB, the PDF reader, the embeddings) is the knowledge function's:
    // the worker may invoke it (its link), and installs nothing beside its bundle.
    link: [
      table,
      bucket,
      queue,
      sandbox,
      sandboxData,
      knowledge,
      ...workerLlmSecrets,
      ...Object.values(webSearchSecrets),
    ],
    // Waits beyond the queue's 15 minutes: one-time schedules in the wakes' group;
    // with LlmProvider=bedrock, InvokeModel on the configured models only.
    permissions: $resolve([
      wakePermissions,
      toolSecretsOpenPermissions,
      workerBedrockPermissions,
    ]).apply((groups) => groups.flat()),
    environment: withoutEmpty({
      STACKVM_TABLE: table.name,
      STACKVM_BUCKET: bucket.name,
      STACKVM_QUEUE_URL: queue.url,
      STACKVM_SANDBOX_FUNCTION: sandbox.name,
      // Python that imports the data libraries goes to the data function.
      STACKVM_SANDBOX_DATA_FUNCTION: sandboxDataFunction.name,
      STACKVM_KNOWLEDGE_FUNCTION: knowledge.name,
      ...wakeEnvironment,
      ...toolSecretsEnvironment,
      ...workerLlmEnvironment,
      ...webSearchEnvironment,
      ...reasonLlmEnvironment,
      // An answer that would outlast the invocation fails as llm_timeout, and is retried.
      LLM_TIMEOUT_MS: llmTimeoutMsWithin(workerTimeoutSeconds),
      ...llmTraceEnvironment,
      ...observabilityEnvironment,
    }),
  },
  { batch: { size: 10, partialResponses: true } },
);

/** The DLQ's subscription. It may enqueue the failed task's outgoing webhook on the step queue. */
export const deadLetterSubscription = deadLetterQueue.subscribe(
  {
    handler: "packages/functions/src/dlq.handler",
    timeout: "60 seconds",
    memory: "512 MB",
    link: [table, bucket, queue],
    environment: {
      STACKVM_TABLE: table.name,
      STACKVM_BUCKET: bucket.name,
      STACKVM_QUEUE_URL: queue.url,
      STACKVM_DLQ_URL: deadLetterQueue.url,
    },
  },
  { batch: { size: 10, partialResponses: true } },
);

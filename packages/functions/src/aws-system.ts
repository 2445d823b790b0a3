/**
 * The system on AWS: configuration from the environment (read once per cold
 * start), the AWS SDK clients with their default credential chain, Powertools'
 * structured logger. Every entry file starts here.
 *
 * A cold start builds the DynamoDB and SQS clients, which every invocation
 * uses; S3 (large values only) and EventBridge Scheduler (schedule routes
 * only) are imported by their first call (`lazyS3Blobs`,
 * `lazyEventBridgeScheduler`), so that the functions that rarely need them do
 * not parse them at start.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import {
  createDataClients,
  DynamoItemStore,
  lazyEventBridgeScheduler,
  lazyEventBridgeWakes,
  lazyMcpClient,
  lazyS3Blobs,
  lazyS3Uploads,
  SqsQueue,
} from "@stackvm/aws/lambda";
import { type LlmPort, type Log, type SandboxPort, StackVMError, systemClock } from "@stackvm/core";
import { loadConfig, type RuntimeConfig, type ScheduleTarget } from "./config";
import type { SystemPorts } from "./system";
import { type SystemOptions, systemOptions } from "./system-options";
import { toolSecretBox } from "./tool-secrets";
import { unconfiguredLlm } from "./unconfigured-llm";

/** Powertools' logger behind the core's small `Log` interface. */
export function powertoolsLog(logger: Logger): Log {
  return {
    debug: (m, e) => logger.debug(m, e ?? {}),
    info: (m, e) => logger.info(m, e ?? {}),
    warn: (m, e) => logger.warn(m, e ?? {}),
    error: (m, e) => logger.error(m, e ?? {}),
  };
}

const noSandbox: SandboxPort = {
  async run() {
    throw new StackVMError("step", "sandbox_unavailable", "STACKVM_SANDBOX_FUNCTION is not set");
  },
};

/** The adapters' settings for a schedule group of the configuration. */
const targetOptions = (target: ScheduleTarget) => ({
  groupName: target.group,
  roleArn: target.roleArn,
  targetArn: target.functionArn,
  deadLetterArn: target.dlqArn,
});

/** What every function builds from the environment before its own wiring: the ports, the options. */
export interface AwsPorts {
  config: RuntimeConfig;
  logger: Logger;
  log: Log;
  ports: SystemPorts;
  options: SystemOptions;
}

/**
 * The ports on AWS and the system's options, from the environment; `sandbox`
 * is given by the worker, the only function that invokes it.
 */
export function awsPorts(
  env: Record<string, string | undefined> = process.env,
  sandbox: (config: RuntimeConfig) => SandboxPort | null = () => null,
  /** Only the worker calls an LLM: it passes the OpenAI adapter (see worker.ts). */
  llm: (config: RuntimeConfig) => LlmPort = () => unconfiguredLlm,
  /**
   * Knowledge: the knowledge function passes LanceDB and the embeddings
   * (knowledge-function.ts), the worker the port that invokes that function (worker.ts).
   */
  knowledge?: (
    config: RuntimeConfig,
  ) => Pick<SystemPorts, "knowledgeIndex" | "embeddings" | "knowledge">,
): AwsPorts {
  const config = loadConfig(env);
  const logger = new Logger({ serviceName: "stackvm" });
  const log = powertoolsLog(logger);
  const clients = createDataClients({ region: config.region });
  const ports: SystemPorts = {
    items: new DynamoItemStore(clients.doc, config.table),
    blobs: lazyS3Blobs({ region: config.region }, config.bucket),
    uploads: lazyS3Uploads({ region: config.region }, config.bucket),
    queue: new SqsQueue(clients.sqs, config.queueUrl),
    clock: systemClock,
    sandbox: sandbox(config) ?? noSandbox,
    llm: llm(config),
    ...(knowledge ? knowledge(config) : {}),
    mcp: lazyMcpClient(),
    // Secret headers of tool sources, sealed with the stage's KMS key.
    ...toolSecretBox(env, config.region),
    ...(config.schedules
      ? { scheduler: lazyEventBridgeScheduler(config.region, targetOptions(config.schedules)) }
      : {}),
    // Only the worker has a wake group: it is the one that begins waits.
    ...(config.wakes
      ? { wakes: lazyEventBridgeWakes(config.region, targetOptions(config.wakes)) }
      : {}),
  };
  const options: SystemOptions = {
    ...systemOptions(config, log, false),
    // The API and the scheduler have no LLM settings of their own: the deployment says
    // whether it has an LLM (infra/secrets.ts), so a goal without one answers 422 at once.
    ...(config.llmConfigured === null ? {} : { llmConfigured: config.llmConfigured }),
    // Likewise for embeddings: without them a document upload answers 422 at once.
    ...(config.embeddingsConfigured === null
      ? {}
      : {
          knowledge: {
            ...config.knowledge,
            embeddingsConfigured: config.embeddingsConfigured,
          },
        }),
  };
  return { config, logger, log, ports, options };
}

/**
 * The system on AWS, the one assembly every Lambda entry file starts from:
 * configuration from the environment (read once per cold start), the AWS SDK
 * clients with their default credential chain, Powertools' structured logger,
 * and the system's wiring over them (`system.ts`, the same the local stack
 * runs). The worker builds what steps use (`awsStepSystem`), every other
 * function the whole system (`awsSystem`); what only one function holds (the
 * worker's sandbox and LLM, the knowledge function's index) it gives here.
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
import {
  type KnowledgePort,
  type LlmPort,
  type Log,
  type SandboxPort,
  StackVMError,
  systemClock,
} from "@stackvm/core";
import { loadConfig, type RuntimeConfig, type ScheduleTarget } from "./config";
import {
  createStepSystem,
  createSystem,
  type StepSystem,
  type System,
  type SystemPorts,
} from "./system";
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

/** What a function holds that the others do not, each built from the configuration. */
export interface AwsGiven {
  /** Only the worker invokes the sandbox (worker.ts); none: a code step says it is not set. */
  sandbox?: (config: RuntimeConfig) => SandboxPort | null;
  /** Only the worker and the knowledge function call an LLM; none: a call says none is configured. */
  llm?: (config: RuntimeConfig) => LlmPort;
}

/** A function's system on AWS, with what it was built from. */
export interface AwsRuntime<S> {
  config: RuntimeConfig;
  log: Log;
  system: S;
}

/**
 * The whole system on AWS; the knowledge function gives the LanceDB index and
 * the embeddings that run knowledge's searches and ingest (knowledge-function.ts).
 */
export function awsSystem(
  env: Record<string, string | undefined> = process.env,
  given: AwsGiven & {
    knowledge?: (config: RuntimeConfig) => Pick<SystemPorts, "knowledgeIndex" | "embeddings">;
  } = {},
): AwsRuntime<System> {
  const { config, log, ports, options } = awsParts(env, given);
  const knowledge = given.knowledge?.(config) ?? {};
  return { config, log, system: createSystem({ ...ports, ...knowledge }, options) };
}

/**
 * What running steps needs on AWS, for the worker, which reaches knowledge
 * through the knowledge function (`knowledge`, worker.ts): it builds neither
 * the API's services nor the schedules' nor knowledge's own, so that its cold
 * start loads none of them (docs/deploy.md, "Cold starts").
 */
export function awsStepSystem(
  env: Record<string, string | undefined>,
  given: AwsGiven & { knowledge: (config: RuntimeConfig) => KnowledgePort },
): AwsRuntime<StepSystem> {
  const { config, log, ports, options } = awsParts(env, given);
  return {
    config,
    log,
    system: createStepSystem({ ...ports, knowledge: given.knowledge(config) }, options),
  };
}

/** The ports on AWS and the system's options, from the environment. */
function awsParts(
  env: Record<string, string | undefined>,
  given: AwsGiven,
): { config: RuntimeConfig; log: Log; ports: SystemPorts; options: SystemOptions } {
  const config = loadConfig(env);
  const log = powertoolsLog(new Logger({ serviceName: "stackvm" }));
  const clients = createDataClients({ region: config.region });
  const ports: SystemPorts = {
    items: new DynamoItemStore(clients.doc, config.table),
    blobs: lazyS3Blobs({ region: config.region }, config.bucket),
    uploads: lazyS3Uploads({ region: config.region }, config.bucket),
    queue: new SqsQueue(clients.sqs, config.queueUrl),
    clock: systemClock,
    sandbox: given.sandbox?.(config) ?? noSandbox,
    llm: given.llm?.(config) ?? unconfiguredLlm,
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
  return { config, log, ports, options };
}

/**
 * The system on AWS: configuration from the environment (read once per cold
 * start), the AWS SDK clients with their default credential chain, Powertools'
 * structured logger. Every entry file starts here.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import {
  createAwsClients,
  DynamoItemStore,
  EventBridgeScheduler,
  S3Blobs,
  SqsQueue,
  schedulerClient,
} from "@stackvm/aws";
import { type LlmPort, type Log, type SandboxPort, StackVMError, systemClock } from "@stackvm/core";
import { loadConfig, type RuntimeConfig } from "./config";
import { createSystem, type System, systemOptions } from "./system";
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

export interface AwsRuntime {
  config: RuntimeConfig;
  logger: Logger;
  log: Log;
  system: System;
}

/** Builds the runtime; `sandbox` is given by the worker, the only function that invokes it. */
export function awsRuntime(
  env: Record<string, string | undefined> = process.env,
  sandbox: (
    config: RuntimeConfig,
    clients: ReturnType<typeof createAwsClients>,
  ) => SandboxPort | null = () => null,
  /** Only the worker calls an LLM: it passes the OpenAI adapter (see worker.ts). */
  llm: (config: RuntimeConfig) => LlmPort = () => unconfiguredLlm,
): AwsRuntime {
  const config = loadConfig(env);
  const logger = new Logger({ serviceName: "stackvm" });
  const log = powertoolsLog(logger);
  const clients = createAwsClients({ region: config.region });
  const system = createSystem(
    {
      items: new DynamoItemStore(clients.doc, config.table),
      blobs: new S3Blobs(clients.s3, config.bucket),
      queue: new SqsQueue(clients.sqs, config.queueUrl),
      clock: systemClock,
      sandbox: sandbox(config, clients) ?? noSandbox,
      llm: llm(config),
      ...(config.schedules
        ? {
            scheduler: new EventBridgeScheduler(schedulerClient(config.region), {
              groupName: config.schedules.group,
              roleArn: config.schedules.roleArn,
              targetArn: config.schedules.functionArn,
              deadLetterArn: config.schedules.dlqArn,
            }),
          }
        : {}),
    },
    systemOptions(config, log, false),
  );
  return { config, logger, log, system };
}

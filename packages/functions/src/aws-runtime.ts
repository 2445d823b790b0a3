/**
 * The whole system on AWS, for every function but the worker: the ports and
 * options of `aws-system.ts` wired into every service (`system.ts`). The worker
 * builds only the step system (`step-system.ts`) and does not import this
 * file, so that its cold start does not load the API's services, knowledge's
 * own or the schedules' (docs/deploy.md, "Cold starts").
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import type { Log } from "@stackvm/core";
import { awsPorts } from "./aws-system";
import type { RuntimeConfig } from "./config";
import { createSystem, type System } from "./system";

export interface AwsRuntime {
  config: RuntimeConfig;
  logger: Logger;
  log: Log;
  system: System;
}

/** Builds the whole system on AWS. */
export function awsRuntime(...args: Parameters<typeof awsPorts>): AwsRuntime {
  const { config, logger, log, ports, options } = awsPorts(...args);
  return { config, logger, log, system: createSystem(ports, options) };
}

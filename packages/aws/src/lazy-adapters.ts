/**
 * The adapters that the Lambda entries build on first use: the AWS SDK clients
 * are the heaviest modules a cold start would parse (the S3 client with its
 * presigner is about 150 KB minified), and most invocations never call them (S3
 * holds only values over 64 KiB, the EventBridge Scheduler client serves only
 * the schedule routes). Each is core's `lazyPort` over a dynamic `import()`,
 * which the bundler (`nodejs.splitting`, infra/*.ts) makes a chunk of its own,
 * and whose methods come from the port's type, not from a list. The worker's own two (OpenAI, Lambda) are in
 * `lazy-worker-adapters.ts`, so that the other functions' bundles do not carry
 * them: the bundler makes a chunk of every `import()` of a module it includes.
 */

import type { Blobs, SchedulerPort, WakePort } from "@stackvm/core";
import { lazyPort } from "@stackvm/core";
import type { AwsClientsOptions } from "./client-config";
import type { EventBridgeSchedulerOptions } from "./eventbridge-target";

/** Blobs on S3 (values over 64 KiB, attachments): loaded by the first large value. */
export function lazyS3Blobs(options: AwsClientsOptions, bucket: string): Blobs {
  return lazyPort<Blobs>(async () => {
    const { S3Blobs, s3Client } = await import("./s3-blobs");
    return new S3Blobs(s3Client(options), bucket);
  });
}

/** Tenants' schedules on EventBridge Scheduler: loaded by the first schedule written or deleted. */
export function lazyEventBridgeScheduler(
  region: string,
  options: EventBridgeSchedulerOptions,
): SchedulerPort {
  return lazyPort<SchedulerPort>(async () => {
    const { EventBridgeScheduler, schedulerClient } = await import("./eventbridge-scheduler");
    return new EventBridgeScheduler(schedulerClient(region), options);
  });
}

/** Wakes of waiting branches beyond the queue's 15 minutes: loaded by the first such wait. */
export function lazyEventBridgeWakes(
  region: string,
  options: EventBridgeSchedulerOptions,
): WakePort {
  return lazyPort<WakePort>(async () => {
    const [{ EventBridgeWakes }, { schedulerClient }] = await Promise.all([
      import("./eventbridge-wakes"),
      import("./eventbridge-target"),
    ]);
    return new EventBridgeWakes(schedulerClient(region), options);
  });
}

/**
 * The adapters that the Lambda entries build on first use (see
 * `on-first-use.ts` for why): each imports its module, and the SDK client in
 * it, when a call first needs it. The worker's own two (OpenAI, Lambda) are in
 * `lazy-worker-adapters.ts`, so that the other functions' bundles do not carry
 * them: the bundler makes a chunk of every `import()` of a module it includes.
 */
import type { Blobs, SchedulerPort, WakePort } from "@stackvm/core";
import type { AwsClientsOptions } from "./client-config";
import type { EventBridgeSchedulerOptions } from "./eventbridge-target";
import { onFirstUse } from "./on-first-use";

/** Blobs on S3 (values over 64 KiB, attachments): loaded by the first large value. */
export function lazyS3Blobs(options: AwsClientsOptions, bucket: string): Blobs {
  return onFirstUse<Blobs>(
    ["put", "get", "presign", "deletePrefix", "deleteOlderThan"],
    async () => {
      const { S3Blobs, s3Client } = await import("./s3-blobs");
      return new S3Blobs(s3Client(options), bucket);
    },
  );
}

/** Tenants' schedules on EventBridge Scheduler: loaded by the first schedule written or deleted. */
export function lazyEventBridgeScheduler(
  region: string,
  options: EventBridgeSchedulerOptions,
): SchedulerPort {
  return onFirstUse<SchedulerPort>(["put", "delete"], async () => {
    const { EventBridgeScheduler, schedulerClient } = await import("./eventbridge-scheduler");
    return new EventBridgeScheduler(schedulerClient(region), options);
  });
}

/** Wakes of waiting branches beyond the queue's 15 minutes: loaded by the first such wait. */
export function lazyEventBridgeWakes(
  region: string,
  options: EventBridgeSchedulerOptions,
): WakePort {
  return onFirstUse<WakePort>(["wakeAt"], async () => {
    const [{ EventBridgeWakes }, { schedulerClient }] = await Promise.all([
      import("./eventbridge-wakes"),
      import("./eventbridge-target"),
    ]);
    return new EventBridgeWakes(schedulerClient(region), options);
  });
}

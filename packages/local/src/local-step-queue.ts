import { SqsQueue } from "@stackvm/aws";

/**
 * The step queue, telling the poller which messages the worker hid itself (a
 * retry after a delay, a wake not yet due), so that it stops keeping them
 * hidden for the visibility timeout and their own delay holds.
 */
export class LocalStepQueue extends SqsQueue {
  readonly retimed = new Set<string>();
  override async retryAfter(receiptHandle: string, seconds: number): Promise<void> {
    this.retimed.add(receiptHandle);
    await super.retryAfter(receiptHandle, seconds);
  }
}

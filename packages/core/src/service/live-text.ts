/**
 * One events stream's side of the token relay (`token-relay.ts`, `events.ts`).
 */
import type { Commit } from "../model";
import type { Clock } from "../ports/clock";
import type { TextMarks } from "./event-ids";
import { type LiveBatch, type TokenCursor, type TokenRelay, WATCH_REFRESH_MS } from "./token-relay";

/**
 * How long a writer's last batch stays in the ids: past the relay's look-back a
 * resumed reader cannot find its batches anyway (`token-relay.ts`).
 */
const MARK_KEPT_MS = 30_000;

/**
 * One stream's side of the token relay: keeps the task's watch mark fresh and
 * reads the text written since the last read, without the text of steps whose
 * commit the stream already sent, nor batches the client received before it
 * reconnected (`marks`: each writer's batches are written one after another).
 */
export class LiveText {
  private cursor: TokenCursor;
  private watchedAt = Number.NEGATIVE_INFINITY;
  /** `{branch}#{parent_id}` of every commit sent: their steps are over. */
  private readonly done = new Set<string>();
  /** Each writer's last batch sent (ids carry it), and when it was last seen (to forget it). */
  readonly marks: TextMarks;
  private readonly markedAt = new Map<string, number>();

  constructor(
    private readonly relay: TokenRelay,
    private readonly tenant: string,
    private readonly taskId: string,
    private readonly clock: Clock,
    resumed: TextMarks,
  ) {
    this.cursor = relay.cursor();
    this.marks = new Map(resumed);
    for (const writer of resumed.keys()) this.markedAt.set(writer, clock.now());
  }

  /** Records a batch as sent; writers silent for a while leave the marks (their text is gone). */
  sent(batch: LiveBatch): void {
    this.marks.set(batch.writer, batch.n);
    this.markedAt.set(batch.writer, batch.at);
    const horizon = this.clock.now() - MARK_KEPT_MS;
    for (const [writer, at] of this.markedAt) {
      if (at < horizon) {
        this.markedAt.delete(writer);
        this.marks.delete(writer);
      }
    }
  }

  committed(commit: Commit): void {
    this.done.add(`${commit.branch}#${commit.parent_id}`);
  }

  /** Writes the task's watch mark (again, once it is `WATCH_REFRESH_MS` old). */
  async watch(): Promise<void> {
    const now = this.clock.now();
    if (now - this.watchedAt < WATCH_REFRESH_MS) return;
    this.watchedAt = now;
    await this.relay.watch(this.tenant, this.taskId);
  }

  async read(): Promise<LiveBatch[]> {
    await this.watch();
    const { batches, cursor } = await this.relay.read(this.tenant, this.taskId, this.cursor);
    this.cursor = cursor;
    return batches.filter(
      (b) =>
        !this.done.has(`${b.event.branch}#${b.event.parent_id}`) &&
        (this.marks.get(b.writer) ?? -1) < b.n,
    );
  }
}

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
/** How long after a batch's time its writer's next one is looked for: its cadence, and a write's time. */
const WRITE_MARGIN_MS = 15;
/** Between two reads for a batch that is due and not there yet, and how long it is waited for so. */
const RETRY_MS = 20;
const GIVE_UP_MS = 80;
/** A writer seen this recently is read for every `tokenPollMs` once its batches stop coming when due. */
const ACTIVE_MS = 1_000;

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
  /** Each writer's next batch: when it is due (its last one's time and the cadence), and when it was last seen. */
  private readonly writers = new Map<string, { due: number; seen: number }>();

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

  /**
   * How long to wait before the next read: until the next batch of a writer is
   * due (a writer batches every `flushMs`), a little more while it is late, every
   * `pollMs` while a writer's clock does not tell when (`pollMs`), or null when
   * no one writes (the stream waits for its next poll of the task).
   */
  nextRead(pollMs: number): number | null {
    const now = this.clock.now();
    let due = Number.POSITIVE_INFINITY;
    let active = false;
    for (const [writer, { due: at, seen }] of this.writers) {
      if (now - seen > ACTIVE_MS) {
        this.writers.delete(writer);
        continue;
      }
      active = true;
      if (at >= now - GIVE_UP_MS) due = Math.min(due, at);
    }
    if (due !== Number.POSITIVE_INFINITY) {
      return Math.min(Math.max(RETRY_MS, due - now), this.relay.flushMs + WRITE_MARGIN_MS);
    }
    return active ? pollMs : null;
  }

  /** Whether some writer's next batch is due soon: its text is coming, its commit not yet. */
  writing(): boolean {
    const now = this.clock.now();
    for (const { due } of this.writers.values()) if (due >= now - GIVE_UP_MS) return true;
    return false;
  }

  async read(): Promise<LiveBatch[]> {
    await this.watch();
    const { batches, cursor } = await this.relay.read(this.tenant, this.taskId, this.cursor);
    this.cursor = cursor;
    const now = this.clock.now();
    for (const b of batches) {
      const due = b.at + this.relay.flushMs + WRITE_MARGIN_MS;
      this.writers.set(b.writer, {
        due: Math.max(due, this.writers.get(b.writer)?.due ?? 0),
        seen: now,
      });
    }
    return batches.filter(
      (b) =>
        !this.done.has(`${b.event.branch}#${b.event.parent_id}`) &&
        (this.marks.get(b.writer) ?? -1) < b.n,
    );
  }
}

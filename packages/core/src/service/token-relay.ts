/**
 * The live text of LLM calls, from the worker that makes them to the API that
 * streams a task's events (`event: token`). The step's commit stays the only
 * record: tokens live a couple of minutes in the store and are never read again
 * once delivered.
 *
 * The path costs little when nobody watches. An events stream marks its task
 * watched (one write when it opens, then one every `WATCH_REFRESH_MS`); the worker
 * reads that mark at a step's first piece of streamed text, and while it is not
 * there again every `RECHECK_FIRST_MS` to `RECHECK_MAX_MS` (so that a watcher who
 * comes mid-step gets the step's text); only when it is there does it write the
 * text: a piece after a quiet spell at once, the others batched every `flushMs`
 * (125 ms) into short-lived items, plus a last batch before the call returns.
 * The stream reads when a writer's next batch is due (`live-text.ts`): about one
 * query per batch.
 *
 * Items live in a partition of their own beside the task's (`{taskPk}#LIVE`), so
 * that no reader of the task's history ever sees them: `WATCH` is the mark,
 * `TOK#{epoch ms:15}#{writer}#{n:6}` a batch. Sort keys order batches by the
 * writer's clock; a reader looks back `LOOKBACK_MS` and skips what it delivered,
 * so a batch that becomes visible a little after a newer one is not lost.
 */

import type { TokenEvent, TokenSink, TokenTarget } from "../llm/types";
import type { LlmPurpose } from "../model";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { LiveTextStore } from "../store/live-text-store";

/** How long a watch mark holds without being refreshed. */
export const WATCH_TTL_MS = 60_000;
/** How often an open events stream refreshes its task's mark. */
export const WATCH_REFRESH_MS = 20_000;
/** How long a batch lives: long enough to be read by a stream that polls every fraction of a second. */
const BATCH_TTL_MS = 120_000;
/** How far back a reader looks for batches written by a slower clock or a slower write. */
const LOOKBACK_MS = 5_000;
/** At most this many characters per batch item: far below DynamoDB's item limit. */
const MAX_BATCH_CHARS = 100_000;
/** While nobody watches, a step reads the mark again after this, then twice as long, up to the max. */
export const RECHECK_FIRST_MS = 500;
export const RECHECK_MAX_MS = 2_000;
/** Text kept for a watcher that may come mid-step; past it, such a watcher gets only what follows. */
const MAX_UNSENT_CHARS = 200_000;

/** One batch as a reader gets it: the text, who wrote it and its number among that writer's batches. */
export interface LiveBatch {
  event: TokenEvent;
  /** The writer (one sink: one step's LLM calls), whose batches are written one after another. */
  writer: string;
  n: number;
  /** When it was written (epoch ms, the writer's clock). */
  at: number;
}

/** Where a reader is: the batches it delivered (sort key to time), and where it last looked. */
export interface TokenCursor {
  seen: Map<string, number>;
  /** Epoch ms of the last read; batches older than this minus `LOOKBACK_MS` are not looked at. */
  since: number;
}

export interface TokenRelayDeps {
  live: LiveTextStore;
  clock: Clock;
  log?: Log;
  /** Between two batches of one call (default 125 ms). */
  flushMs?: number;
}

/**
 * @example
 * const relay = new TokenRelay({ live: new LiveTextStore(items), clock });
 * await relay.watch(tenant, taskId); // the API, while a client streams
 * const sink = relay.sink({ tenant, taskId, branch: "main", seq_no: 3, parent_id, final_answer: true });
 * const { batches } = await relay.read(tenant, taskId, relay.cursor()); // the API, each poll
 */
export class TokenRelay {
  /** Between two batches of one call: a reader expects the next one this long after the last. */
  readonly flushMs: number;

  constructor(private readonly deps: TokenRelayDeps) {
    this.flushMs = deps.flushMs ?? 125;
  }

  /** Marks the task watched for `WATCH_TTL_MS`: its steps publish their text meanwhile. */
  async watch(tenant: string, taskId: string): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.live.putWatch(tenant, taskId, now + WATCH_TTL_MS);
  }

  /** True while some events stream holds the task's mark. */
  async watched(tenant: string, taskId: string): Promise<boolean> {
    const until = await this.deps.live.watchedUntil(tenant, taskId);
    return until !== null && until > this.deps.clock.now();
  }

  /** A reader's starting point: batches from now on. */
  cursor(): TokenCursor {
    return { seen: new Map(), since: this.deps.clock.now() };
  }

  /** The batches written since the cursor, oldest first, and the cursor after them. */
  async read(
    tenant: string,
    taskId: string,
    cursor: TokenCursor,
  ): Promise<{ batches: LiveBatch[]; cursor: TokenCursor }> {
    const now = this.deps.clock.now();
    const from = cursor.since - LOOKBACK_MS;
    const seen = new Map([...cursor.seen].filter(([, at]) => at >= from));
    const batches: LiveBatch[] = [];
    for await (const item of this.deps.live.batchesFrom(tenant, taskId, from)) {
      if (seen.has(item.sk)) continue;
      // Expired batches linger until the store deletes them: filtered here.
      if (typeof item.ttl === "number" && item.ttl * 1000 < now) continue;
      seen.set(item.sk, Number(item.at));
      batches.push({
        event: item.event as TokenEvent,
        writer: String(item.writer),
        n: Number(item.n),
        at: Number(item.at),
      });
    }
    return { batches, cursor: { seen, since: now } };
  }

  /**
   * The sink of one step: reads the watch mark at its first piece of text and,
   * while nobody watches, again every so often (`RECHECK_FIRST_MS`, doubling up
   * to `RECHECK_MAX_MS`), keeping the call's text meanwhile: a client that starts
   * watching mid-step gets that text in one batch, then the rest as it comes.
   * Once watched, a piece after a quiet spell goes out at once and the others at
   * most every `flushMs`. Publishing is best effort: a failed write is logged and
   * the step goes on.
   */
  sink(target: TokenTarget): TokenSink {
    const { tenant, taskId, ...event } = target;
    const writer = Math.random().toString(36).slice(2, 10);
    // "off" until the mark was read and found; `checkAt` is when to read it again.
    let state: "off" | "checking" | "on" = "off";
    let checkAt = Number.NEGATIVE_INFINITY;
    let recheckMs = RECHECK_FIRST_MS;
    let checked: Promise<void> = Promise.resolve();
    // Text of this call not published yet because nobody watched (bounded).
    let unsent: Array<{ purpose: LlmPurpose; text: string }> = [];
    let unsentChars = 0;
    let pending: { purpose: LlmPurpose; text: string } | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let lastWrite = Number.NEGATIVE_INFINITY;
    let written = Promise.resolve();
    let n = 0;

    const write = (batch: { purpose: LlmPurpose; text: string }) => {
      lastWrite = this.deps.clock.now();
      written = written.then(async () => {
        const at = this.deps.clock.now();
        try {
          await this.deps.live.putBatch(tenant, taskId, {
            at,
            writer,
            n: n++,
            expires: at + BATCH_TTL_MS,
            event: { ...event, ...batch } satisfies TokenEvent,
          });
        } catch (error) {
          this.deps.log?.warn("token batch not published", {
            task_id: taskId,
            error: error instanceof Error ? error.message : String(error),
          });
        }
      });
      return written;
    };
    const take = async () => {
      timer = undefined;
      if (!pending) return;
      const batch = pending;
      pending = null;
      await write(batch);
    };
    // Adds text to the next batch, which goes at once after a quiet spell, else within `flushMs`.
    const add = (purpose: LlmPurpose, text: string) => {
      if (pending && (pending.purpose !== purpose || pending.text.length > MAX_BATCH_CHARS)) {
        void write(pending);
        pending = null;
      }
      pending = pending ? { purpose, text: pending.text + text } : { purpose, text };
      if (timer !== undefined) return;
      const wait = lastWrite + this.flushMs - this.deps.clock.now();
      if (wait <= 0) void take();
      else timer = setTimeout(() => void take(), wait);
    };
    const check = () => {
      state = "checking";
      checked = this.watched(tenant, taskId).then(
        (yes) => found(yes),
        () => found(false),
      );
    };
    const found = (yes: boolean) => {
      if (!yes) {
        state = "off";
        checkAt = this.deps.clock.now() + recheckMs;
        recheckMs = Math.min(recheckMs * 2, RECHECK_MAX_MS);
        return;
      }
      state = "on";
      const held = unsent;
      unsent = [];
      unsentChars = 0;
      for (const piece of held) add(piece.purpose, piece.text);
    };

    return {
      delta: (purpose, text) => {
        if (!text) return;
        if (state === "on") return add(purpose, text);
        if (unsentChars + text.length <= MAX_UNSENT_CHARS) {
          const last = unsent.at(-1);
          if (last?.purpose === purpose) last.text += text;
          else unsent.push({ purpose, text });
          unsentChars += text.length;
        }
        if (state === "off" && this.deps.clock.now() >= checkAt) check();
      },
      flush: async () => {
        await checked;
        if (timer !== undefined) clearTimeout(timer);
        await take();
        await written;
        // The next call (another attempt) streams from its own start.
        unsent = [];
        unsentChars = 0;
      },
    };
  }
}

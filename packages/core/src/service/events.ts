/**
 * Live events of a task (`GET /v1/tasks/{id}/events`): one `commit` event per
 * commit of every branch, in order, `status` events when the task's status
 * changes, and `end` once the task and all its branches have finished.
 *
 * The API is stateless, so events come from polling the store: each poll reads the
 * task and its branches (one get, one query); a branch whose head moved past what
 * was delivered gets one range query over its own commits (`C#{bid}#{depth}`),
 * from the last delivered depth to the head. Commits are delivered only once the
 * head reaches them, so what a client sees is what the branch has committed.
 *
 * Every commit event's id is the resume cursor: the commit's time, then for each
 * branch (by internal id) the depth delivered so far, e.g.
 * `2026-01-01T00:00:01.000Z/k3j9x0aa-4.p0q8w7zz-6`. Ids sort by time, and a
 * client that reconnects with `Last-Event-ID` gets exactly the commits after it,
 * even when branches committed out of clock order (`event-ids.ts`).
 *
 * With a `TokenRelay`, the stream also carries `event: token`: the text of
 * `llm_generate` and planner calls as it is written (`token-relay.ts`), read
 * every `tokenPollMs` between polls. Tokens are not stored for long: a reconnect
 * resumes the commits and may miss text of a step in flight, whose commit then
 * carries it whole; it never gets text again that it received, since every id
 * (tokens' too) also names the last batch sent of each writer. Text of a step
 * whose commit was already sent is dropped.
 *
 * `event: end` has an id too, marked as the end: a client that reconnects with
 * it while nothing came since is told to stop (`finished`, the route's 204).
 */
import type { TokenEvent } from "../llm/types";
import type { Commit, LlmCallInFlight, Retrying, RunningGroup, Task } from "../model";
import { TERMINAL_STATUSES } from "../model-values";
import type { Clock } from "../ports/clock";
import { parseCommitId } from "../store/keys";
import type { CommitRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import {
  decodeEventId,
  decodeResumePoint,
  type EventCursor,
  encodeEventId,
  withTexts,
} from "./event-ids";
import { LiveText } from "./live-text";
import { inFlightOf, type Presenter, presentGroup } from "./present";
import type { TaskReads } from "./task-reads";
import type { LiveBatch, TokenRelay } from "./token-relay";

/** One server-sent event; `heartbeat` is a comment that keeps idle connections open. */
export type TaskEvent =
  | { event: "commit"; id: string; data: Commit }
  | { event: "status"; data: Task }
  /** A branch's step failed and will be tried again (`vm/retrying.ts`): once per attempt. */
  | { event: "retrying"; data: Retrying & { branch: string } }
  /** A branch's parallel group started or one of its members' results is held. */
  | { event: "group"; data: RunningGroup & { branch: string } }
  /** A branch's step started an LLM call (an attempt of it): once per attempt. */
  | { event: "llm_call"; data: LlmCallInFlight & { branch: string } }
  /** Text an LLM call of a step in flight is writing (`token-relay.ts`); its id marks it sent. */
  | { event: "token"; id: string; data: TokenEvent }
  /** Its id, marked as the end, makes a reconnect answer `finished`. */
  | { event: "end"; id: string; data: { task_id: string; status: Task["status"] } }
  | { event: "heartbeat" };

export interface TaskEventsDeps {
  store: TaskStore;
  /** The task's record and its place in line for a slot. */
  tasks: Pick<TaskReads, "record" | "withSlotWait">;
  presenter: Presenter;
  clock: Clock;
  /** Between two polls of the store (default 250 ms). */
  pollMs?: number;
  /** How long one connection lives; the client reconnects with `Last-Event-ID` (default 5 min). */
  maxConnectionMs?: number;
  /** Silence after which a heartbeat is sent (default 15 s). */
  heartbeatMs?: number;
  /** Waits between polls; tests pass one that needs no real time. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Live LLM text of the steps in flight; none: no `token` events. */
  tokens?: TokenRelay;
  /** Between two reads of the live text when a writer's clock does not say when (default 100 ms). */
  tokenPollMs?: number;
  /** Between two polls of the store while a step's text comes (default 1 s). */
  writingPollMs?: number;
}

/** What one poll found. */
export interface PollResult {
  events: TaskEvent[];
  cursor: EventCursor;
  task: Task;
  /** The task is terminal and so is every branch: nothing more will come. */
  done: boolean;
  /** Branches whose last step failed and will be tried again. */
  retrying: Array<Retrying & { branch: string }>;
  /** Branches whose parallel group runs, with the members done so far. */
  groups: Array<RunningGroup & { branch: string }>;
  /** The LLM calls running branches wait on (`Branch.llm_call`). */
  calls: Array<LlmCallInFlight & { branch: string }>;
}

export class TaskEvents {
  private readonly pollMs: number;
  private readonly maxConnectionMs: number;
  private readonly heartbeatMs: number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly tokenPollMs: number;
  private readonly writingPollMs: number;

  constructor(private readonly deps: TaskEventsDeps) {
    this.pollMs = deps.pollMs ?? 250;
    this.tokenPollMs = deps.tokenPollMs ?? 100;
    this.writingPollMs = deps.writingPollMs ?? 1_000;
    this.maxConnectionMs = deps.maxConnectionMs ?? 5 * 60_000;
    this.heartbeatMs = deps.heartbeatMs ?? 15_000;
    this.sleep = deps.sleep ?? abortableSleep;
  }

  /** Checks that the task exists for this tenant (404 otherwise) before a stream starts. */
  async check(tenant: string, taskId: string): Promise<void> {
    await this.deps.tasks.record(tenant, taskId);
  }

  /**
   * Whether a client that reconnects with `lastEventId` has had everything: the
   * id is that of `event: end`, and the task is still over with no commit since
   * (a fork or a retry makes it go on). The route answers such a reconnect 204.
   */
  async finished(tenant: string, taskId: string, lastEventId: string | null): Promise<boolean> {
    const point = decodeResumePoint(lastEventId);
    if (!point.ended) return false;
    const result = await this.poll(tenant, taskId, point.cursor);
    return result.done && result.events.length === 0;
  }

  /** One poll: the commits after `cursor` in order, and the task as it is now. */
  async poll(tenant: string, taskId: string, cursor: EventCursor): Promise<PollResult> {
    // Both reads at once: a missing task answers 404 whatever the branch query found.
    const [record, branches] = await Promise.all([
      this.deps.tasks.record(tenant, taskId),
      this.deps.store.listBranches(tenant, taskId),
    ]);
    const next: EventCursor = new Map(cursor);
    const queues: CommitRecord[][] = [];
    for (const branch of branches) {
      const from = (cursor.get(branch.bid) ?? -1) + 1;
      if (branch.head !== null && branch.depth >= from) {
        queues.push(
          await this.deps.store.listCommitsBetween(tenant, taskId, branch.bid, from, branch.depth),
        );
      }
    }
    const events: TaskEvent[] = [];
    // Merge the branches by time, each branch in depth order.
    for (;;) {
      let pick: CommitRecord[] | undefined;
      for (const queue of queues) {
        const head = queue[0];
        if (head && (!pick || before(head, pick[0]!))) pick = queue;
      }
      const commit = pick?.shift();
      if (!commit) break;
      next.set(commit.bid, commit.depth);
      events.push({
        event: "commit",
        id: encodeEventId(commit.created_at, next),
        data: await this.deps.presenter.commit(commit, tenant, taskId),
      });
    }
    // Every listed branch is delivered up to its head; deleted branches leave the cursor.
    const listed = new Map(branches.map((b) => [b.bid, b.depth]));
    for (const bid of [...next.keys()]) if (!listed.has(bid)) next.delete(bid);
    for (const [bid, depth] of listed) if (depth >= 0) next.set(bid, depth);
    const task = await this.deps.tasks.withSlotWait(
      await this.deps.presenter.task(record, branches),
      record,
    );
    const done =
      TERMINAL_STATUSES.has(task.status) && branches.every((b) => TERMINAL_STATUSES.has(b.status));
    const retrying = await Promise.all(
      branches
        .filter((b) => b.retrying && !TERMINAL_STATUSES.has(b.status))
        .map(async (b) => ({ branch: b.name, ...(await this.deps.presenter.branch(b)).retrying! })),
    );
    const groups = branches.flatMap((b) =>
      b.group && !TERMINAL_STATUSES.has(b.status)
        ? [{ branch: b.name, ...presentGroup(b.group) }]
        : [],
    );
    // The calls running branches wait on: each attempt is sent once, when first seen.
    // Read off the branch records the poll already has: no presenting, no blob read.
    const now = this.deps.clock.now();
    const calls = branches.flatMap((b) => {
      const shown = inFlightOf(b, now);
      return shown ? [{ branch: b.name, ...shown }] : [];
    });
    return { events, cursor: next, task, done, retrying, groups, calls };
  }

  /**
   * The events of a task from `lastEventId` on, until the task is done, the
   * connection has lived `maxConnectionMs`, or `signal` aborts. With `tokens:
   * false` the stream carries no live text and marks nothing watched, so the
   * task's steps publish none for it (a reader that wants only the outcome).
   */
  async *stream(
    tenant: string,
    taskId: string,
    options: { lastEventId?: string | null; signal?: AbortSignal; tokens?: boolean } = {},
  ): AsyncGenerator<TaskEvent> {
    const point = decodeResumePoint(options.lastEventId);
    let cursor = point.cursor;
    const started = this.deps.clock.now();
    let lastStatus: string | null = null;
    const retriesSent = new Set<string>();
    const groupsSent = new Set<string>();
    const callsSent = new Set<string>();
    let lastSent = started;
    const live =
      this.deps.tokens && options.tokens !== false
        ? new LiveText(this.deps.tokens, tenant, taskId, this.deps.clock, point.texts)
        : null;
    // Every id names the text sent so far, so that a resume never sends it again.
    const marks = live?.marks ?? new Map<string, number>();
    // The commits the client has received (a poll's cursor runs ahead of the events it yields).
    let shown = cursor;
    const token = (batch: LiveBatch): TaskEvent => {
      live?.sent(batch);
      const at = new Date(batch.at).toISOString();
      return { event: "token", id: encodeEventId(at, shown, { texts: marks }), data: batch.event };
    };
    // Watched from the start: a step that begins while the first poll runs streams too.
    await live?.watch();
    // Text read before the commit its step starts from was sent: held for the next poll.
    let held: LiveBatch[] = [];
    for (;;) {
      const result = await this.poll(tenant, taskId, cursor);
      cursor = result.cursor;
      // A step publishes its last text before it commits (`LlmSession` flushes its
      // sink first), so the text read now holds all of it. Each step's text goes
      // after the commit it starts from and before the commit that ends it (after
      // which the rest would be dropped as over); a step still running, after all.
      let text = held;
      held = [];
      if (live && result.events.some((event) => event.event === "commit")) {
        text = text.concat(await live.read());
      }
      for (const event of result.events) {
        if (event.event === "commit") {
          const ends = ({ event: t }: LiveBatch) =>
            t.branch === event.data.branch && t.parent_id === event.data.parent_id;
          for (const batch of text.filter(ends)) yield token(batch);
          text = text.filter((t) => !ends(t));
          live?.committed(event.data);
          shown = decodeEventId(event.id);
          yield { ...event, id: withTexts(event.id, marks) };
        } else yield event;
      }
      shown = cursor;
      for (const batch of text) yield token(batch);
      for (const retry of result.retrying) {
        const key = `${retry.branch}#${retry.since}#${retry.attempt}`;
        if (retriesSent.has(key)) continue;
        retriesSent.add(key);
        yield { event: "retrying", data: retry };
      }
      let called = false;
      for (const call of result.calls) {
        const key = `${call.branch}#${call.started_at}#${call.attempt}`;
        if (callsSent.has(key)) continue;
        callsSent.add(key);
        called = true;
        yield { event: "llm_call", data: call };
      }
      let grouped = false;
      for (const group of result.groups) {
        const key = `${group.branch}#${group.base}#${group.done.join(",")}`;
        if (groupsSent.has(key)) continue;
        groupsSent.add(key);
        grouped = true;
        yield { event: "group", data: group };
      }
      // A new status, or a new place in line for a running slot.
      const status = `${result.task.status}#${result.task.waiting_for_slot?.position ?? ""}`;
      const changed = status !== lastStatus;
      if (changed) {
        lastStatus = status;
        yield { event: "status", data: result.task };
      }
      if (result.done) {
        const at = new Date(this.deps.clock.now()).toISOString();
        yield {
          event: "end",
          id: encodeEventId(at, cursor, { texts: marks, ended: true }),
          data: { task_id: taskId, status: result.task.status },
        };
        return;
      }
      const now = this.deps.clock.now();
      if (result.events.length > 0 || result.retrying.length > 0 || grouped || called || changed)
        lastSent = now;
      else if (now - lastSent >= this.heartbeatMs) {
        lastSent = now;
        yield { event: "heartbeat" };
      }
      if (options.signal?.aborted || now - started >= this.maxConnectionMs) return;
      if (!live) {
        await this.sleep(this.pollMs, options.signal);
        continue;
      }
      // Between two polls, the live text: when a writing step's next batch is due
      // (`LiveText.nextRead`), else once per poll (an idle stream costs one read more).
      const polledAt = this.deps.clock.now();
      const pollAt = polledAt + this.pollMs;
      for (;;) {
        const texts = await live.read();
        if (texts.length > 0) lastSent = this.deps.clock.now();
        // The text of a step whose starting commit this stream has not sent yet
        // (the step ran before the poll saw the commit before it) waits for a poll,
        // which comes at once: a client sees a plan's commit before its first answer.
        const early = texts.filter((t) => !startSent(t.event, cursor));
        for (const batch of texts) if (startSent(batch.event, cursor)) yield token(batch);
        if (early.length > 0) {
          held = early;
          break;
        }
        if (options.signal?.aborted) break;
        // While a step's text comes, its commit does not: the task is polled less
        // (every `writingPollMs`), and at once when the text stops.
        const now = this.deps.clock.now();
        const writing = live.writing();
        const left = (writing ? polledAt + this.writingPollMs : pollAt) - now;
        if (left <= 0) break;
        const wait = live.nextRead(this.tokenPollMs);
        await this.sleep(wait === null ? left : Math.min(wait, left), options.signal);
      }
    }
  }
}

/** Whether the commit a token's step starts from is at or before `cursor` (a first step has none). */
function startSent(token: TokenEvent, cursor: EventCursor): boolean {
  if (token.parent_id === null) return true;
  const parent = parseCommitId(token.parent_id);
  return parent === null || (cursor.get(parent.bid) ?? -1) >= parent.depth;
}

function before(a: CommitRecord, b: CommitRecord): boolean {
  return (
    a.created_at < b.created_at || (a.created_at === b.created_at && a.commit_id < b.commit_id)
  );
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

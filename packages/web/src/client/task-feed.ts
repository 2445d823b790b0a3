/**
 * Everything the task page shows, kept current: the task, its branches and the
 * commits they reach. While anything runs (the task, or a branch forked after
 * it finished) it follows the task's event stream (`GET /v1/tasks/{id}/events`,
 * read with `fetch` since `EventSource` cannot send the API key), and polls
 * where the stream is unavailable. The text LLM calls of running steps are
 * writing (`event: token`) is kept per step until the step's commit arrives.
 */
import type { Branch, Commit, RunningGroup, Task, TokenEvent } from "@stackvm/core";
import { type Api, ApiError, errorOf, seg } from "./api";
import { parseShown } from "./bidi";
import { SseParser } from "./sse";
import { TERMINAL } from "./status";

/** Commits loaded per branch at most; older history is marked as cut in the graph. */
const MAX_COMMITS_PER_BRANCH = 2000;
const PAGE = 100;
const POLL_MS = 1000;
/** While the stream is open, a slow poll still catches what the stream does not carry. */
const SAFETY_POLL_MS = 5000;
/** The wait before reconnecting a stream that closed (the server's `retry`). */
const RECONNECT_MS = 1000;
/** Streams that close this soon after opening, this many times in a row, mean: poll instead. */
const SHORT_STREAM_MS = 2000;
const SHORT_STREAMS_TO_GIVE_UP = 3;

export interface TaskSnapshot {
  task: Task | null;
  branches: Branch[];
  commits: ReadonlyMap<string, Commit>;
  error: ApiError | null;
  /** How the page follows the task now. */
  live: "stream" | "poll" | null;
  /** Text being written by LLM calls of steps not yet committed, in the order they began. */
  writing: WritingText[];
}

/** What one running step's LLM call has written so far. */
export type WritingText = Omit<TokenEvent, "text"> & { text: string };

export class TaskFeed {
  private task: Task | null = null;
  private branches: Branch[] = [];
  private commits = new Map<string, Commit>();
  private error: ApiError | null = null;
  private stopped = false;
  private refreshing: Promise<void> | null = null;
  private again = false;
  private soon: ReturnType<typeof setTimeout> | null = null;
  private poll: ReturnType<typeof setInterval> | null = null;
  private pollEvery = 0;
  private stream: AbortController | null = null;
  private streamUnavailable = false;
  private shortStreams = 0;
  private reopenAt = 0;
  private lastEventId: string | null = null;
  /** By `{branch}#{parent_id}`: a step's commit has the same pair, and ends its entry. */
  private writing = new Map<string, WritingText>();
  private snapshot: TaskSnapshot;

  constructor(
    private readonly api: Api,
    private readonly taskId: string,
    private readonly onChange: (snapshot: TaskSnapshot) => void,
  ) {
    this.snapshot = this.take();
  }

  get current(): TaskSnapshot {
    return this.snapshot;
  }

  start(): void {
    void this.refresh();
  }

  stop(): void {
    this.stopped = true;
    this.stream?.abort();
    this.stream = null;
    this.setPoll(0);
    if (this.soon) clearTimeout(this.soon);
  }

  /** Forgets the commits and loads again (after a branch was deleted). */
  async reload(): Promise<void> {
    this.commits = new Map();
    await this.refresh();
  }

  /** Loads what changed; calls made while one runs are folded into one more run. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        await this.load();
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private refreshSoon(): void {
    if (this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      void this.refresh();
    }, 200);
  }

  private async load(): Promise<void> {
    try {
      const path = `/v1/tasks/${seg(this.taskId)}`;
      const [task, list] = await Promise.all([
        this.api.get<Task>(path),
        this.api.get<{ branches: Branch[] }>(`${path}/branches`),
      ]);
      this.task = task;
      this.branches = list.branches;
      for (const branch of list.branches) {
        if (branch.head && !this.commits.has(branch.head)) await this.loadCommits(branch.name);
      }
      this.error = null;
    } catch (e) {
      this.error = e instanceof ApiError ? e : new ApiError(0, "client_error", String(e));
    }
    if (!this.stopped) {
      this.follow();
      this.emit();
    }
  }

  /** Pages back from a branch head until a commit already known (or the cap). */
  private async loadCommits(branch: string): Promise<void> {
    let cursor: string | null = null;
    let seen = 0;
    for (;;) {
      const query: string = `limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page: { commits: Commit[]; next_cursor: string | null } = await this.api.get(
        `/v1/tasks/${seg(this.taskId)}/branches/${seg(branch)}/commits?${query}`,
      );
      let known = false;
      for (const commit of page.commits) {
        if (this.commits.has(commit.commit_id)) known = true;
        else this.commits.set(commit.commit_id, commit);
      }
      seen += page.commits.length;
      cursor = page.next_cursor;
      if (known || !cursor || seen >= MAX_COMMITS_PER_BRANCH) return;
    }
  }

  private active(): boolean {
    if (!this.task) return false;
    return !TERMINAL.has(this.task.status) || this.branches.some((b) => !TERMINAL.has(b.status));
  }

  /** Streams while the task runs, polls while only a branch runs, rests when all is done. */
  private follow(): void {
    if (!this.active() || this.error?.status === 404) {
      this.stream?.abort();
      this.stream = null;
      this.setPoll(0);
      return;
    }
    if (!this.streamUnavailable) {
      if (!this.stream && Date.now() >= this.reopenAt) void this.openStream();
      this.setPoll(SAFETY_POLL_MS);
    } else {
      this.setPoll(POLL_MS);
    }
  }

  private setPoll(every: number): void {
    if (every === this.pollEvery) return;
    if (this.poll) clearInterval(this.poll);
    this.poll = every ? setInterval(() => void this.refresh(), every) : null;
    this.pollEvery = every;
  }

  private async openStream(): Promise<void> {
    const controller = new AbortController();
    this.stream = controller;
    const opened = Date.now();
    try {
      const response = await this.api.raw(`/v1/tasks/${seg(this.taskId)}/events`, {
        signal: controller.signal,
        headers: {
          accept: "text/event-stream",
          ...(this.lastEventId ? { "last-event-id": this.lastEventId } : {}),
        },
      });
      const type = response.headers.get("content-type") ?? "";
      if (!response.ok || !type.includes("text/event-stream") || !response.body) {
        // No events route on this server (or it refused): polling gives the same picture.
        if (!response.ok) await errorOf(response);
        this.streamUnavailable = true;
        this.stream = null;
        if (!this.stopped) void this.refresh();
        return;
      }
      this.emit("stream");
      const parser = new SseParser();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        // One render per chunk: a reconnect replays the whole history at once.
        let changed = false;
        let wrote = false;
        for (const event of parser.feed(value)) {
          if (event.event === "token") wrote = this.onToken(event.data) || wrote;
          else changed = this.onEvent(event.event, event.data) || changed;
        }
        this.lastEventId = parser.lastEventId ?? this.lastEventId;
        // Text alone re-renders the page; it changes nothing the API must be asked about.
        if (changed || wrote) this.emit();
        if (changed) this.refreshSoon();
      }
    } catch (e) {
      if ((e as Error).name === "AbortError") return;
    } finally {
      if (this.stream === controller) this.stream = null;
    }
    // A stream closes at the server's time limit and after `end`; one that keeps closing
    // at once (a proxy that buffers, say) is not worth reopening: poll instead.
    this.shortStreams = Date.now() - opened < SHORT_STREAM_MS ? this.shortStreams + 1 : 0;
    if (this.shortStreams >= SHORT_STREAMS_TO_GIVE_UP) this.streamUnavailable = true;
    this.reopenAt = Date.now() + RECONNECT_MS;
    if (!this.stopped) {
      void this.refresh();
      setTimeout(() => this.stopped || void this.refresh(), RECONNECT_MS);
    }
  }

  /** Adds a piece of a step's text; says whether there is something new to show. */
  private onToken(data: string): boolean {
    let token: TokenEvent;
    try {
      token = JSON.parse(data) as TokenEvent;
    } catch {
      return false;
    }
    if (typeof token?.text !== "string") return false;
    const key = `${token.branch}#${token.parent_id}`;
    const had = this.writing.get(key);
    // A new call of the same step (a repair round, the planner's next try) starts over.
    const text = had && had.purpose === token.purpose ? had.text + token.text : token.text;
    this.writing.set(key, { ...token, text });
    return true;
  }

  /** Applies one event; says whether the page has something new to show. */
  private onEvent(event: string, data: string): boolean {
    if (event === "end") return true;
    let value: unknown;
    try {
      value = parseShown(data);
    } catch {
      return false;
    }
    if (event === "commit") {
      const commit = value as Commit;
      if (!commit?.commit_id || this.commits.has(commit.commit_id)) return false;
      this.commits.set(commit.commit_id, commit);
      this.writing.delete(`${commit.branch}#${commit.parent_id}`);
      return true;
    }
    if (event === "status") {
      this.task = value as Task;
      return true;
    }
    // A step failed and will be tried again: the refresh reads the task's `retrying`.
    if (event === "retrying") return true;
    if (event === "group") {
      // A parallel group started or a member's result is held: shown before any commit.
      const { branch, ...group } = value as RunningGroup & { branch: string };
      this.branches = this.branches.map((b) => (b.name === branch ? { ...b, group } : b));
      return true;
    }
    return false;
  }

  private take(live?: TaskSnapshot["live"]): TaskSnapshot {
    return {
      task: this.task,
      branches: this.branches,
      commits: this.commits,
      error: this.error,
      live: live ?? (this.stream ? "stream" : this.pollEvery === POLL_MS ? "poll" : null),
      writing: [...this.writing.values()],
    };
  }

  private emit(live?: TaskSnapshot["live"]): void {
    if (this.stopped) return;
    // A new Map each time, so that the page sees a change and re-renders.
    this.commits = new Map(this.commits);
    this.snapshot = this.take(live);
    this.onChange(this.snapshot);
  }
}

/**
 * Follows a task's live events (`GET /v1/tasks/{id}/events`, Server-Sent Events)
 * until the `end` event, reconnecting with `Last-Event-ID` when a connection
 * closes early (the server caps how long one lives) or drops.
 */
import type { Commit, Retrying, Task, TokenEvent } from "@stackvm/core";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { Client } from "./client";
import { CliError, EXIT } from "./exit-codes";

export interface FollowHandlers {
  commit(commit: Commit): void;
  status(task: Task): void;
  /** A branch's step failed and will be tried again (once per attempt). */
  retrying?(retry: Retrying & { branch: string }): void;
  /** A piece of text an LLM call of a step in flight is writing (not resumed on reconnect). */
  token?(token: TokenEvent): void;
}

export interface FollowOptions {
  /** Reconnects in a row without any event before giving up (default 5). */
  maxRetries?: number;
  /** Wait before a reconnect, unless the server said otherwise (default 1 s). */
  retryMs?: number;
  /** Stops following early (`fork --watch` stops when its branch ends): resolves at once. */
  signal?: AbortSignal;
}

/** Resolves when the task and all its branches have ended, or `signal` aborts. */
export async function follow(
  client: Client,
  taskId: string,
  on: FollowHandlers,
  options: FollowOptions = {},
): Promise<void> {
  const maxRetries = options.maxRetries ?? 5;
  let retryMs = options.retryMs ?? 1_000;
  let lastEventId: string | null = null;
  let failures = 0;
  const signal = options.signal;
  for (;;) {
    if (signal?.aborted) return;
    let ended = false;
    let received = 0;
    const parser = createParser({
      onRetry: (ms) => {
        retryMs = ms;
      },
      onEvent: (message: EventSourceMessage) => {
        received++;
        if (message.id) lastEventId = message.id;
        if (message.event === "commit") on.commit(JSON.parse(message.data) as Commit);
        else if (message.event === "status") on.status(JSON.parse(message.data) as Task);
        else if (message.event === "retrying") on.retrying?.(JSON.parse(message.data));
        else if (message.event === "token") on.token?.(JSON.parse(message.data));
        else if (message.event === "end") ended = true;
      },
    });
    const path = `/v1/tasks/${encodeURIComponent(taskId)}/events`;
    try {
      const response = await client.stream(
        path,
        lastEventId ? { "last-event-id": lastEventId } : {},
        signal,
      );
      const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) break;
        parser.feed(chunk.value);
      }
    } catch (error) {
      if (signal?.aborted) return;
      // Refusals (404, 401) are final; a dropped connection is retried below.
      if (error instanceof CliError && error.exitCode !== EXIT.unavailable) throw error;
      if (!(error instanceof CliError) && (error as Error).name !== "TypeError") throw error;
    }
    if (ended) return;
    failures = received > 0 ? 0 : failures + 1;
    if (failures > maxRetries) {
      throw new CliError(
        EXIT.unavailable,
        `lost the event stream of ${taskId} ${failures} times in a row: check that StackVM at ${client.url} is running, then follow the task again with \`stackvm watch ${taskId}\``,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, retryMs));
  }
}

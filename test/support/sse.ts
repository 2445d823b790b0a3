/**
 * Reads a Server-Sent Events stream over HTTP as a client would, for system tests
 * of `GET /v1/tasks/{id}/events`.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface SseRead {
  status: number;
  events: EventSourceMessage[];
  /** True when the server ended the stream (rather than the reader stopping early). */
  closed: boolean;
}

/**
 * Opens the stream and collects events until the server closes it, or until
 * `until` says stop (the connection is then dropped, as a client going away).
 */
export async function readSse(
  url: string,
  key: string,
  options: {
    lastEventId?: string;
    until?: (events: EventSourceMessage[]) => boolean;
    timeoutMs?: number;
  } = {},
): Promise<SseRead> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), options.timeoutMs ?? 30_000);
  const events: EventSourceMessage[] = [];
  try {
    const response = await fetch(url, {
      headers: {
        authorization: `Bearer ${key}`,
        accept: "text/event-stream",
        ...(options.lastEventId ? { "last-event-id": options.lastEventId } : {}),
      },
      signal: abort.signal,
    });
    if (!response.ok || !response.body) {
      await response.text();
      return { status: response.status, events, closed: true };
    }
    let stop = false;
    const parser = createParser({
      onEvent(event) {
        if (stop) return;
        events.push(event);
        if (options.until?.(events)) stop = true;
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return { status: response.status, events, closed: true };
      parser.feed(chunk.value);
      if (stop) {
        abort.abort();
        await reader.cancel().catch(() => undefined);
        return { status: response.status, events, closed: false };
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

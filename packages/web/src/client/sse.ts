/**
 * A Server-Sent Events parser for streams read with `fetch`. `EventSource`
 * cannot send an `Authorization` header, and the API takes its key only there.
 */

export interface SseEvent {
  /** `message` when the stream names none. */
  event: string;
  data: string;
  id: string | null;
}

/**
 * Feeds text as it arrives; returns the events completed by it.
 *
 * @example
 * const parser = new SseParser();
 * parser.feed("event: commit\ndata: {}\n\n") // [{ event: "commit", data: "{}", id: null }]
 */
export class SseParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];
  private id: string | null = null;
  /** The id of the last dispatched event, for `Last-Event-ID` on reconnect. */
  lastEventId: string | null = null;

  feed(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      // A lone \r at the end may be half of \r\n: wait for the next chunk.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event) out.push(event);
    }
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === "") {
      if (this.id !== null) this.lastEventId = this.id;
      if (this.data.length === 0) {
        this.event = "";
        return null;
      }
      const event = { event: this.event || "message", data: this.data.join("\n"), id: this.id };
      this.event = "";
      this.data = [];
      return event;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.id = value;
    return null;
  }
}

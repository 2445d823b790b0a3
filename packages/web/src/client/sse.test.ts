import { describe, expect, it } from "vitest";
import { SseParser } from "./sse";

describe("SseParser", () => {
  it("dispatches an event at the blank line, with its name, data and id", () => {
    const parser = new SseParser();
    expect(parser.feed('id: 7\nevent: commit\ndata: {"a":1}\n\n')).toEqual([
      { event: "commit", data: '{"a":1}', id: "7" },
    ]);
    expect(parser.lastEventId).toBe("7");
  });

  it("joins data lines and reassembles events split across chunks", () => {
    const parser = new SseParser();
    expect(parser.feed("data: one\r")).toEqual([]);
    expect(parser.feed("\ndata: two\r\n")).toEqual([]);
    expect(parser.feed("\r\n")).toEqual([{ event: "message", data: "one\ntwo", id: null }]);
  });

  it("skips comments and events without data", () => {
    const parser = new SseParser();
    expect(parser.feed(": keep-alive\n\nevent: ping\n\n")).toEqual([]);
  });
});

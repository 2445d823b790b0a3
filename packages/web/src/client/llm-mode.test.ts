import { describe, expect, it } from "vitest";
import { NO_LLM_KEY, serverHasNoLlm } from "./llm-mode";

/** A page whose only meta is the server's word on its LLM (or none at all). */
const page = (content: string | null) => ({
  querySelector: (selector: string) =>
    content !== null && selector === 'meta[name="stackvm-llm"]'
      ? ({ getAttribute: (name: string) => (name === "content" ? content : null) } as Element)
      : null,
});
const session = (entries: Record<string, string> = {}) => ({
  getItem: (key: string) => entries[key] ?? null,
});

describe("serverHasNoLlm", () => {
  it.each<[string, string | null, Record<string, string>, boolean]>([
    ["the page says none", "none", {}, true],
    ["the page says configured", "configured", {}, false],
    ["an older page says nothing", null, {}, false],
    ["the API refused a goal this session", "configured", { [NO_LLM_KEY]: "1" }, true],
  ])("when %s: %s", (_when, content, entries, expected) => {
    expect(serverHasNoLlm(page(content), session(entries))).toBe(expected);
  });
});

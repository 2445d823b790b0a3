import { describe, expect, it } from "vitest";
import type { GenerateOptions, LlmSession } from "../llm/types";
import { testToolContext } from "../testing/tool-context";
import { LlmGenerateInput, llmGenerateTool } from "./llm-generate";
import { asksForJson } from "./llm-generate-run";

/** An LlmSession that records each request and answers with the given text. */
function fakeLlm(text: string, value?: unknown) {
  const requests: GenerateOptions[] = [];
  const session: LlmSession = {
    calls: [],
    checkBudget() {},
    async generate(options) {
      requests.push(options);
      return value === undefined ? { text } : { text, value };
    },
    json: () => Promise.reject(new Error("llm_generate must not call json()")),
  };
  return { session, requests };
}

function run(input: unknown, llm: LlmSession, extra: Parameters<typeof testToolContext>[0] = {}) {
  return llmGenerateTool.run(LlmGenerateInput().parse(input), testToolContext({ llm, ...extra }));
}

describe("llm_generate", () => {
  it("returns the text and asks with purpose llm_generate, without JSON", async () => {
    const { session, requests } = fakeLlm("Three facts.");
    const { value } = await run({ prompt: "List three facts." }, session);
    expect(value).toBe("Three facts.");
    expect(requests[0]).toMatchObject({ purpose: "llm_generate", json: false });
    expect(requests[0]?.messages.at(-1)).toEqual({ role: "user", content: "List three facts." });
  });

  it("puts the task's goal and language in the system message", async () => {
    const { session, requests } = fakeLlm("東京");
    await run({ prompt: "Name the capital." }, session, {
      goal: "Write a travel guide to Japan",
      responseFormat: { Lang: "Japanese", format: "markdown" },
    });
    const system = requests[0]?.messages[0];
    expect(system?.role).toBe("system");
    expect(system?.content).toContain("Write a travel guide to Japan");
    expect(system?.content).toContain("Write your answer in Japanese.");
    expect(system?.content).toContain("format: markdown");
  });

  it("passes context as text, and JSON context as JSON", async () => {
    const { session, requests } = fakeLlm("ok");
    await run({ prompt: "Summarize.", context: { rows: [1, 2] } }, session);
    const user = requests[0]?.messages.at(-1)?.content ?? "";
    expect(user).toContain('"rows"');
    expect(user).toContain("Request:\nSummarize.");
  });

  it("asks to cite retrieved chunks by id only when the material holds some", async () => {
    const { session, requests } = fakeLlm("Deer roam Nara [doc_a:1f2e3d4c:0].");
    const chunks = [
      { chunk_id: "doc_a:1f2e3d4c:0", text: "Deer roam Nara.", filename: "nara.pdf" },
    ];
    await run({ prompt: "Where do deer roam?", context: chunks }, session);
    await run({ prompt: `Answer from ${JSON.stringify(chunks)}` }, session);
    await run({ prompt: "Summarize.", context: { rows: [1, 2] } }, session);
    const systems = requests.map((r) => r.messages[0]?.content ?? "");
    expect(systems[0]).toContain("cite it as [chunk_id]");
    expect(systems[1]).toContain("cite it as [chunk_id]");
    expect(systems[2]).not.toContain("chunk_id");
  });

  it.each([
    ["a JSON list of names", ["Ada", "Alan"]],
    [{ type: "json_object" }, { a: 1 }],
    [{ schema: { type: "object" } }, { b: 2 }],
  ])("asks for JSON and returns the parsed value for %j", async (format, parsed) => {
    const { session, requests } = fakeLlm(JSON.stringify(parsed));
    const { value } = await run({ prompt: "Give data.", response_format: format }, session);
    expect(value).toEqual(parsed);
    expect(requests[0]?.json).toBe(true);
    expect(requests[0]?.messages[0]?.content).toContain("Answer with JSON only");
  });

  it("prefers the session's parsed value", async () => {
    const { session } = fakeLlm('{"x": 1}', { x: 1, from: "session" });
    const { value } = await run({ prompt: "Give data.", response_format: "json" }, session);
    expect(value).toEqual({ x: 1, from: "session" });
  });

  it("keeps the task's language for the texts inside a JSON answer", async () => {
    const { session, requests } = fakeLlm("{}");
    await run({ prompt: "Give data.", response_format: "json" }, session, {
      responseFormat: { language: "French" },
    });
    expect(requests[0]?.messages[0]?.content).toContain("inside the JSON in French");
  });

  it("fails with llm_invalid_json when a JSON answer does not parse", async () => {
    const { session } = fakeLlm("Sure! Here it is: {oops");
    await expect(
      run({ prompt: "Give data.", response_format: "JSON" }, session),
    ).rejects.toMatchObject({ code: "llm_invalid_json" });
  });

  it.each([
    [{ prompt: "" }, "must not be empty"],
    [{ prompt: "x".repeat(100_001) }, "100,000"],
    [{}, "prompt"],
    [{ prompt: "x", temperature: 1 }, "temperature"],
  ])("refuses bad input %#", (input, words) => {
    const result = LlmGenerateInput().safeParse(input);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain(words);
  });
});

describe("asksForJson", () => {
  it.each([
    ["markdown table", false],
    [{ lang: "French" }, false],
    ["Json", true],
    [{ format: "JSON array" }, true],
  ])("says %j -> %s", (format, expected) => {
    expect(asksForJson(format)).toBe(expected);
  });
});

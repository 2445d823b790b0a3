/**
 * One doctor run at a time, and one a minute: the LLM check bills the operator,
 * so requests that come while a run is under way, or within a minute after it,
 * share its answer instead of calling again.
 */
import { LlmConfig, type LlmRequest } from "@stackvm/core";
import type { SandboxResponse } from "@stackvm/core/sandbox-protocol";
import { describe, expect, it } from "vitest";
import { createDoctor, DOCTOR_CACHE_MS } from "./doctor";

const ANSWER: SandboxResponse = {
  v: 1,
  result: 42,
  stdout: "",
  stderr: "",
  truncated: false,
  files: [],
  error: null,
  duration_ms: 1,
  limits: { time_ms: 100, memory_mib: 32, output_bytes: 1024, max_files: 0, files_bytes: 0 },
};

describe("createDoctor", () => {
  it("shares one run among the requests that come while it is under way and for a minute after, then runs again", async () => {
    let time = Date.parse("2026-01-01T00:00:00Z");
    const calls: LlmRequest[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const doctor = createDoctor(
      {
        // The LLM answers only once both requests are in.
        llm: {
          async complete(request) {
            calls.push(request);
            await gate;
            return { text: "ok", model: request.model, inputTokens: 1, outputTokens: 1 };
          },
        },
        sandbox: { run: async () => ANSWER },
        llmConfig: LlmConfig.parse({ models: { default: "m", reason: "m", eval: "m" } }),
        embeddingModel: "e",
        baseURL: "http://127.0.0.1:1/v1",
      },
      { now: () => time },
    );
    const first = doctor();
    const second = doctor();
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(calls).toHaveLength(1);
    expect(b).toBe(a);
    expect(a.map((check) => [check.name, check.status])).toEqual([
      ["llm", "ok"],
      ["embeddings", "unchecked"],
      ["sandbox", "ok"],
    ]);
    // A tenant asking in a loop within the minute gets the same answer, and costs nothing.
    for (let i = 0; i < 40; i++) expect(await doctor()).toBe(a);
    expect(calls).toHaveLength(1);
    time += DOCTOR_CACHE_MS;
    await doctor();
    expect(calls).toHaveLength(2);
  });
});

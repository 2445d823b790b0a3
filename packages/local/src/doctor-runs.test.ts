/**
 * One doctor run at a time, and one a minute: the LLM check bills the operator,
 * so requests that come while a run is under way, or within a minute after it,
 * share its answer instead of calling again.
 */
import { DATA_LIBRARIES, DATA_VERSIONS_PROBE, LlmConfig, type LlmRequest } from "@stackvm/core";
import { type SandboxResponse, sandboxError } from "@stackvm/core/sandbox-protocol";
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
  it("shares one run among the requests that come while it is under way and for a minute after, saying how old it is, then runs again", async () => {
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
    // Both asked while it ran: a run made for them, not an earlier one.
    expect(a).toMatchObject({ checkedAt: time, ageMs: 0, cached: false });
    expect(a.checks.map((check) => [check.name, check.status])).toEqual([
      ["llm", "ok"],
      ["embeddings", "unchecked"],
      ["sandbox", "ok"],
      // The fake answers 42 to the versions probe too.
      ["data libraries", "warning"],
    ]);
    // A tenant asking in a loop within the minute gets the same answer, and costs nothing.
    const ranAt = time;
    for (let i = 0; i < 40; i++) {
      time += 1_000;
      const again = await doctor();
      expect(again.checks).toBe(a.checks);
      // Said to be the earlier run's, with its age.
      expect(again).toMatchObject({ checkedAt: ranAt, ageMs: (i + 1) * 1_000, cached: true });
    }
    expect(calls).toHaveLength(1);
    time = ranAt + DOCTOR_CACHE_MS;
    expect(await doctor()).toMatchObject({ checkedAt: time, ageMs: 0, cached: false });
    expect(calls).toHaveLength(2);
  });
});

describe("the doctor's data libraries check", () => {
  const pinned = Object.fromEntries(
    Object.entries(DATA_LIBRARIES).map(([name, pin]) => [name, pin.version]),
  );
  const check = async (answer: (code: string) => Partial<SandboxResponse>) => {
    const doctor = createDoctor({
      llm: {
        complete: async (request) => ({
          text: "ok",
          model: request.model,
          inputTokens: 1,
          outputTokens: 1,
        }),
      },
      sandbox: { run: async ({ code }) => ({ ...ANSWER, ...answer(code) }) },
      llmConfig: LlmConfig.parse({ models: { default: "m", reason: "m", eval: "m" } }),
      embeddingModel: "e",
      baseURL: "http://127.0.0.1:1/v1",
    });
    return (await doctor()).checks.find((c) => c.name === "data libraries");
  };

  it("answers the versions the sandbox has when they are the pinned ones", async () => {
    const found = await check((code) => ({ result: code === DATA_VERSIONS_PROBE ? pinned : 42 }));
    expect(found).toMatchObject({ status: "ok", fix: null });
    expect(found?.detail).toContain(`pandas ${DATA_LIBRARIES.pandas.version}`);
  });

  it("warns with both lists and the fix when a version differs from its pin", async () => {
    const found = await check(() => ({ result: { ...pinned, pandas: "2.2.0" } }));
    expect(found?.status).toBe("warning");
    expect(found?.detail).toContain("pandas 2.2.0");
    expect(found?.detail).toContain(`pinned: python ${DATA_LIBRARIES.python.version}`);
    expect(found?.fix).toContain("scripts/setup-system.sh");
  });

  it("warns with the sandbox's reason when the libraries cannot run there", async () => {
    const found = await check((code) =>
      code === DATA_VERSIONS_PROBE
        ? {
            result: null,
            error: sandboxError("refused", "the data engine runs only behind bubblewrap"),
          }
        : { result: 42 },
    );
    expect(found?.status).toBe("warning");
    expect(found?.detail).toContain("only behind bubblewrap");
  });
});

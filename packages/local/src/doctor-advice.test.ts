/**
 * The doctor's advice matches what the server did, through the real OpenAI
 * adapters against the scripted server: a 500 is a server that runs and failed
 * (not "start the LLM server"), the doctor's own cap is named as such (not
 * LLM_TIMEOUT_MS), an embeddings 501 that says "--embeddings" is reported as
 * such (not "set EMBEDDING_MODEL"), and only a server that gives no answer is
 * one to start.
 */
import { LlmConfig, type SandboxPort } from "@stackvm/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ScriptedLlm, startScriptedLlm } from "../../../test/support/llm-server";
import { OpenAiEmbeddings } from "../../aws/src/openai-embeddings";
import { OpenAiLlm } from "../../aws/src/openai-llm";
import { createDoctor } from "./doctor";

/** Python's answer to `6 * 7`, as the sandbox gives it: this test is about the LLM checks. */
const sandbox = { run: async () => ({ result: 42, error: null }) } as unknown as SandboxPort;

let server: ScriptedLlm;
beforeAll(async () => {
  server = await startScriptedLlm();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

/** A cap that a loaded machine's answers meet; the slow case gives a small one. */
function doctor(baseURL = server.url, checkTimeoutMs = 5_000) {
  return createDoctor(
    {
      llm: new OpenAiLlm({ apiKey: "sk-test", baseURL }),
      embeddings: new OpenAiEmbeddings({ apiKey: "sk-test", baseURL }),
      sandbox,
      llmConfig: LlmConfig.parse({ models: { default: "m", reason: "m", eval: "m" } }),
      embeddingModel: "text-embedding-3-small",
      baseURL,
    },
    { checkTimeoutMs },
  );
}

describe("the doctor's advice", () => {
  it("says a server that answered 500 runs and failed, quoting it, instead of 'start the LLM server'", async () => {
    server.on("text", { fault: "500", message: "failed to load model 'm'" });
    const [llm] = (await doctor()()).checks;
    expect(llm).toMatchObject({ name: "llm", status: "failed" });
    expect(llm?.detail).toContain("failed to load model 'm'");
    expect(llm?.fix).toContain("runs but failed");
    expect(llm?.fix).not.toContain("start the LLM server");
  });

  it("names its own cap on a slow answer, not LLM_TIMEOUT_MS, and says the server runs", async () => {
    server.on("text", { fault: "slow", ms: 3_000, answer: "ok" });
    const [llm] = (await doctor(server.url, 300)()).checks;
    expect(llm?.detail).toContain("the doctor's own cap of 0.3 s per check");
    expect(llm?.detail).not.toContain("(LLM_TIMEOUT_MS)");
    expect(llm?.fix).toContain("runs but did not answer");
    expect(llm?.fix).toContain("LLM_TIMEOUT_MS (now 300 s)");
    expect(llm?.fix).not.toContain("start the LLM server");
  });

  it("reports an embeddings 501 that says --embeddings as such, not as EMBEDDING_MODEL", async () => {
    server.on("text", "ok");
    server.queue("embeddings", {
      fault: "status",
      status: 501,
      message: "This server does not support embeddings. Start it with `--embeddings`",
    });
    const [, embeddings] = (await doctor()()).checks;
    expect(embeddings).toMatchObject({ name: "embeddings", status: "warning" });
    expect(embeddings?.detail).toContain("Start it with `--embeddings`");
    expect(embeddings?.fix).toContain("restart it with --embeddings");
    expect(embeddings?.fix).not.toMatch(/^set EMBEDDING_MODEL/);
  });

  it("tells a server that gives no answer at all to be started", async () => {
    const gone = await startScriptedLlm();
    await gone.close();
    const [llm, embeddings] = (await doctor(gone.url)()).checks;
    expect(llm?.detail).toContain("could not be reached");
    expect(llm?.fix).toContain(`start the LLM server at ${gone.url}`);
    expect(embeddings?.fix).toContain("start the LLM server");
  });
});

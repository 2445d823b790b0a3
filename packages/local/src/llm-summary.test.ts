import { loadConfig } from "@stackvm/functions";
import { describe, expect, it } from "vitest";
import { llmBannerLines, llmSummary } from "./llm-summary";

const base = {
  STACKVM_TABLE: "t",
  STACKVM_QUEUE_URL: "http://127.0.0.1:9324/000000000000/steps.fifo",
  STACKVM_BUCKET: "b",
};

describe("the start-up banner's LLM lines", () => {
  it("name the steps' endpoint and the reasoning roles' own, with each role's model", () => {
    const config = loadConfig({
      ...base,
      OPENAI_BASE_URL: "http://127.0.0.1:8080/v1",
      OPENAI_API_KEY: "steps-key",
      REASON_OPENAI_BASE_URL: "https://reasoner.example/v1",
      REASON_LLM_MODEL: "big",
    });
    const banner = llmBannerLines(llmSummary(config)).join("\n");
    expect(banner).toContain("steps http://127.0.0.1:8080/v1");
    expect(banner).toContain("plans, plan updates, evaluations https://reasoner.example/v1");
    expect(banner).toContain("planner big, generation gpt-4o-mini, evaluation big");
    expect(banner).not.toContain("steps-key");
  });

  it("say what a missing LLM means and what to set", () => {
    const config = loadConfig(base);
    expect(llmSummary(config)).toBeNull();
    expect(llmBannerLines(null).join("\n")).toContain("goals are refused (422)");
  });
});

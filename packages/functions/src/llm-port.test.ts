import type { LlmPort, LlmRequest } from "@stackvm/core";
import { describe, expect, it } from "vitest";
import { roleRouted } from "./llm-port";

function recording(name: string, context: number): { port: LlmPort; seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    port: {
      complete: async (request) => {
        seen.push(`${request.role ?? "(none)"} ${request.model}`);
        return { text: name, model: request.model, inputTokens: 1, outputTokens: 1 };
      },
      contextTokens: async (model) => {
        seen.push(`context ${model}`);
        return context;
      },
    },
  };
}

const ask = (role: LlmRequest["role"], model: string): LlmRequest => ({
  model,
  messages: [{ role: "user", content: "hi" }],
  timeoutMs: 1000,
  ...(role ? { role } : {}),
});

describe("a port over the steps' and the reasoning roles' servers", () => {
  it("answers plans, plan updates and evaluations from the reasoning server, the rest from the steps'", async () => {
    const steps = recording("steps", 4096);
    const reason = recording("reason", 128_000);
    const port = roleRouted(steps.port, reason.port);
    const answers = await Promise.all([
      port.complete(ask("reason", "big")),
      port.complete(ask("eval", "big")),
      port.complete(ask("default", "small")),
      port.complete(ask(undefined, "small")),
    ]);
    expect(answers.map((a) => a.text)).toEqual(["reason", "reason", "steps", "steps"]);
    expect(reason.seen).toEqual(["reason big", "eval big"]);
    expect(steps.seen).toEqual(["default small", "(none) small"]);
  });

  it("asks each role's own server for its context", async () => {
    const steps = recording("steps", 4096);
    const reason = recording("reason", 128_000);
    const port = roleRouted(steps.port, reason.port);
    expect(await port.contextTokens?.("m", { role: "reason" })).toBe(128_000);
    expect(await port.contextTokens?.("m", { role: "default" })).toBe(4096);
    expect(await port.contextTokens?.("m")).toBe(4096);
  });
});

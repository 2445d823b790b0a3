import { describe, expect, it } from "vitest";
import {
  DEFAULT_SANDBOX_LIMITS,
  isInputVariable,
  resolveSandboxLimits,
  SandboxRequest,
  SandboxResponse,
  sandboxError,
  sandboxFailure,
} from "./protocol";

describe("SandboxRequest", () => {
  it("fills defaults for inputs, files and limits", () => {
    expect(SandboxRequest.parse({ v: 1, language: "python", code: "1" })).toEqual({
      v: 1,
      language: "python",
      code: "1",
      inputs: {},
      files: [],
      limits: {},
    });
  });

  it.each([
    ["another version", { v: 2, language: "python", code: "1" }],
    ["an unknown field", { v: 1, language: "python", code: "1", env: {} }],
    ["an unknown limit", { v: 1, language: "python", code: "1", limits: { cpu: 1 } }],
    [
      "a limit past the protocol's bound",
      { v: 1, language: "python", code: "1", limits: { memory_mib: 99_999 } },
    ],
    [
      "an absolute file path",
      {
        v: 1,
        language: "python",
        code: "1",
        files: [{ path: "/etc/passwd", encoding: "utf8", content: "" }],
      },
    ],
    [
      "a '..' file path",
      {
        v: 1,
        language: "python",
        code: "1",
        files: [{ path: "a/../../b", encoding: "utf8", content: "" }],
      },
    ],
    [
      "inputs and files over 48 MiB",
      {
        v: 1,
        language: "python",
        code: "1",
        inputs: { big: "x".repeat(30 << 20) },
        files: [{ path: "a.bin", encoding: "base64", content: "x".repeat(20 << 20) }],
      },
    ],
  ])("refuses %s", (_, request) => {
    expect(SandboxRequest.safeParse(request).success).toBe(false);
  });
});

describe("resolveSandboxLimits", () => {
  const ceiling = { ...DEFAULT_SANDBOX_LIMITS, time_ms: 30_000 };

  it("gives the defaults when nothing is asked", () => {
    expect(resolveSandboxLimits({}, ceiling)).toEqual(DEFAULT_SANDBOX_LIMITS);
  });

  it("lowers a limit when asked", () => {
    expect(resolveSandboxLimits({ time_ms: 2_000, memory_mib: 64 }, ceiling)).toMatchObject({
      time_ms: 2_000,
      memory_mib: 64,
    });
  });

  it("never goes past the ceiling", () => {
    expect(resolveSandboxLimits({ time_ms: 600_000, memory_mib: 4_096 }, ceiling)).toMatchObject({
      time_ms: 30_000,
      memory_mib: DEFAULT_SANDBOX_LIMITS.memory_mib,
    });
  });

  it("caps the defaults by a lower ceiling", () => {
    expect(resolveSandboxLimits(undefined, { ...ceiling, time_ms: 1_000 }).time_ms).toBe(1_000);
  });
});

describe("sandboxError", () => {
  it.each([
    ["internal", true],
    ["unavailable", true],
    ["timeout", false],
    ["memory_limit", false],
    ["runtime_error", false],
  ] as const)("says whether %s can be retried", (code, retryable) => {
    expect(sandboxError(code, "x").retryable).toBe(retryable);
  });

  it("builds a whole answer that follows the protocol", () => {
    const answer = sandboxFailure(sandboxError("internal", "crashed"), DEFAULT_SANDBOX_LIMITS);
    expect(SandboxResponse.parse(answer)).toEqual(answer);
    expect(answer.result).toBeNull();
  });
});

describe("isInputVariable", () => {
  it.each([
    ["rows", true],
    ["_total2", true],
    ["class", false],
    ["lambda", false],
    ["inputs", false],
    ["result", false],
    ["__proto__", false],
    ["__builtins__", false],
    ["first name", false],
    ["2x", false],
    ["é", false],
  ])("%s → %s", (name, expected) => {
    expect(isInputVariable(name)).toBe(expected);
  });
});

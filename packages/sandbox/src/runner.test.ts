import { DEFAULT_SANDBOX_LIMITS, SandboxResponse } from "@stackvm/core/sandbox-protocol";
import { afterEach, describe, expect, it } from "vitest";
import { sandboxConfigFromEnv } from "./config";
import { DEFAULT_SANDBOX_UID, probeBubblewrap } from "./python/containment";
import { SandboxRunner } from "./runner";

const runners: SandboxRunner[] = [];

function runnerWith(config: Partial<ReturnType<typeof sandboxConfigFromEnv>>, logs: string[] = []) {
  const runner = new SandboxRunner(
    { ceiling: DEFAULT_SANDBOX_LIMITS, network: "external", allowNetwork: false, ...config },
    { log: (level, message) => logs.push(`${level}: ${message}`) },
  );
  runners.push(runner);
  return runner;
}

afterEach(async () => {
  await Promise.all(runners.splice(0).map((runner) => runner.close()));
});

describe("SandboxRunner", () => {
  it.each([
    ["a request without a version", { language: "javascript", code: "1" }, /v:/],
    ["an unknown language", { v: 1, language: "ruby", code: "1" }, /language/],
    [
      "an unknown field",
      { v: 1, language: "javascript", code: "1", shell: true },
      /shell|unrecognized/i,
    ],
    ["empty code", { v: 1, language: "javascript", code: "" }, /code is empty/],
    [
      "a file path that leaves the working folder",
      {
        v: 1,
        language: "python",
        code: "1",
        files: [{ path: "../x", encoding: "utf8", content: "" }],
      },
      /relative to the working folder/,
    ],
    [
      "limits above the protocol's bounds",
      { v: 1, language: "python", code: "1", limits: { time_ms: 10 } },
      /time_ms/,
    ],
    ["not an object at all", "print(1)", /expected object/],
  ])("answers %s with invalid_request and says what is wrong", async (_, event, message) => {
    const answer = await runnerWith({}).handle(event);
    expect(SandboxResponse.parse(answer)).toEqual(answer);
    expect(answer.error?.code).toBe("invalid_request");
    expect(answer.error?.retryable).toBe(false);
    expect(answer.error?.message).toMatch(message);
  });

  it("keeps the run's time below what the invocation has left", async () => {
    const answer = await runnerWith({}).handle({ v: 1, language: "javascript", code: "1" }, 4_000);
    expect(answer.limits.time_ms).toBe(2_500);
  });

  it("refuses Python loudly where no OS boundary is made, and says what to install", async () => {
    const logs: string[] = [];
    const runner = runnerWith({ containment: "none" }, logs);
    const answer = await runner.handle({ v: 1, language: "python", code: "1 + 1" });
    expect(answer.error?.code).toBe("refused");
    expect(answer.error?.message).toMatch(/OS boundary.*install bubblewrap/);
    expect(logs.some((line) => line.startsWith("error: SANDBOX CANNOT CONTAIN PYTHON"))).toBe(true);
    expect((await runner.handle({ v: 1, language: "javascript", code: "1 + 1" })).result).toBe(2);
  });

  it("says why bubblewrap cannot run and what to install", () => {
    const probe = probeBubblewrap(
      null,
      { node: "/n", script: "/s", packageJson: "/p", pyodide: "/y" },
      DEFAULT_SANDBOX_UID,
    );
    expect(probe.ok).toBe(false);
    expect(probe.ok ? "" : probe.why).toMatch(/not installed.*`bubblewrap`/);
  });

  it("refuses Python loudly where the network cannot be cut, when run without a boundary", async () => {
    const logs: string[] = [];
    const runner = runnerWith(
      { network: "none", containment: "none", allowUncontained: true },
      logs,
    );
    const answer = await runner.handle({ v: 1, language: "python", code: "1 + 1" });
    expect(answer.error?.code).toBe("refused");
    expect(answer.error?.message).toMatch(/cannot cut the network/);
    expect(logs.some((line) => line.startsWith("error: SANDBOX CANNOT CUT THE NETWORK"))).toBe(
      true,
    );
    // JavaScript has no network API at all, so it still runs.
    expect((await runner.handle({ v: 1, language: "javascript", code: "1 + 1" })).result).toBe(2);
  });

  it("warns loudly when the operator lets Python run with the network", () => {
    const logs: string[] = [];
    runnerWith(
      { network: "none", allowNetwork: true, containment: "none", allowUncontained: true },
      logs,
    );
    expect(logs.some((line) => line.startsWith("warn: SANDBOX HAS NETWORK ACCESS"))).toBe(true);
  });
});

describe("sandboxConfigFromEnv", () => {
  it("takes the defaults as the ceiling and a namespace off Lambda", () => {
    expect(sandboxConfigFromEnv({})).toEqual({
      ceiling: DEFAULT_SANDBOX_LIMITS,
      network: "namespace",
      allowNetwork: false,
      containment: "bubblewrap",
      allowUncontained: false,
    });
  });

  it("trusts the VPC on Lambda and keeps memory inside the function's", () => {
    const config = sandboxConfigFromEnv({
      AWS_LAMBDA_FUNCTION_NAME: "sandbox",
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "512",
      STACKVM_SANDBOX_MAX_MEMORY_MIB: "1024",
    });
    expect(config.network).toBe("external");
    expect(config.containment).toBe("instance");
    expect(config.ceiling.memory_mib).toBe(128);
  });

  it("reads the operator's opt-in and ceilings", () => {
    const config = sandboxConfigFromEnv({
      STACKVM_SANDBOX_ALLOW_NETWORK: "1",
      STACKVM_SANDBOX_MAX_TIME_MS: "30000",
    });
    expect(config.allowNetwork).toBe(true);
    expect(config.ceiling.time_ms).toBe(30_000);
  });

  it("leaves Python's boot to its first run when told (the local stack's tests)", () => {
    expect(sandboxConfigFromEnv({ STACKVM_SANDBOX_WARM_PYTHON: "0" }).warmPython).toBe(false);
    expect(sandboxConfigFromEnv({ STACKVM_SANDBOX_WARM_PYTHON: "1" })).not.toHaveProperty(
      "warmPython",
    );
  });

  it.each([
    [{ STACKVM_SANDBOX_NETWORK: "vpc" }, /STACKVM_SANDBOX_NETWORK/],
    [{ STACKVM_SANDBOX_CONTAINMENT: "docker" }, /STACKVM_SANDBOX_CONTAINMENT/],
    [{ STACKVM_SANDBOX_UID: "0" }, /STACKVM_SANDBOX_UID/],
    [{ STACKVM_SANDBOX_MAX_TIME_MS: "soon" }, /STACKVM_SANDBOX_MAX_TIME_MS/],
    [{ STACKVM_SANDBOX_MAX_TIME_MS: "5" }, /time_ms/],
    [{ STACKVM_SANDBOX_WARM_PYTHON: "no" }, /STACKVM_SANDBOX_WARM_PYTHON/],
  ])("stops on a wrong setting and names it: %o", (env, message) => {
    expect(() => sandboxConfigFromEnv(env)).toThrow(message);
  });
});

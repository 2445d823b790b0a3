import type { InvokeCommand } from "@aws-sdk/client-lambda";
import { classifyFailure } from "@stackvm/core";
import { DEFAULT_SANDBOX_LIMITS, type SandboxResponse } from "@stackvm/core/sandbox-protocol";
import { describe, expect, it } from "vitest";
import { LambdaSandbox } from "./lambda-sandbox";

const encode = (value: unknown) =>
  new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));

const answer: SandboxResponse = {
  v: 1,
  result: 2,
  stdout: "",
  stderr: "",
  truncated: false,
  files: [],
  error: null,
  duration_ms: 3,
  limits: DEFAULT_SANDBOX_LIMITS,
};

/** A Lambda client whose `send` answers once, and keeps the command it got. */
function client(reply: () => unknown) {
  const sent: InvokeCommand[] = [];
  return {
    sent,
    lambda: {
      send: async (command: InvokeCommand) => {
        sent.push(command);
        return reply();
      },
    } as never,
  };
}

const request = {
  v: 1 as const,
  language: "python" as const,
  code: "1 + 1",
  limits: { time_ms: 2_000 },
};

describe("LambdaSandbox", () => {
  it("invokes the function synchronously with the request and returns its answer", async () => {
    const { lambda, sent } = client(() => ({ Payload: encode(answer) }));
    const result = await new LambdaSandbox(lambda, "sandbox-fn").run(request);
    expect(result).toEqual(answer);
    const input = sent[0]?.input;
    expect(input?.FunctionName).toBe("sandbox-fn");
    expect(input?.InvocationType).toBe("RequestResponse");
    expect(JSON.parse(new TextDecoder().decode(input?.Payload as Uint8Array))).toEqual(request);
  });

  it.each([
    [
      "a timeout",
      { errorType: "Sandbox.Timedout", errorMessage: "Task timed out after 60.00 seconds" },
      "timeout",
      false,
    ],
    [
      "the memory ending",
      {
        errorType: "Runtime.OutOfMemory",
        errorMessage: "Runtime exited with error: signal: killed",
      },
      "memory_limit",
      false,
    ],
    ["a crash", { errorType: "Error", errorMessage: "boom" }, "internal", true],
  ])("translates %s of the function into an answer", async (_, payload, code, retryable) => {
    const { lambda } = client(() => ({ FunctionError: "Unhandled", Payload: encode(payload) }));
    const result = await new LambdaSandbox(lambda, "fn").run(request);
    expect(result.error).toMatchObject({ code, retryable });
    expect(result.limits.time_ms).toBe(2_000);
  });

  it("answers internal when the function's answer is not the protocol", async () => {
    const { lambda } = client(() => ({ Payload: encode({ hello: "world" }) }));
    const result = await new LambdaSandbox(lambda, "fn").run(request);
    expect(result.error).toMatchObject({ code: "internal", retryable: true });
  });

  it.each([
    [
      "throttling",
      Object.assign(new Error("Rate exceeded"), {
        name: "TooManyRequestsException",
        $metadata: { httpStatusCode: 429 },
      }),
    ],
    [
      "a service error",
      Object.assign(new Error("oops"), {
        name: "ServiceException",
        $metadata: { httpStatusCode: 500 },
      }),
    ],
    ["a network failure", Object.assign(new Error("socket hang up"), { name: "TimeoutError" })],
  ])("asks for a retry on %s", async (_, error) => {
    const { lambda } = client(() => {
      throw error;
    });
    const failure = await new LambdaSandbox(lambda, "fn").run(request).catch((e: unknown) => e);
    expect(classifyFailure(failure)).toEqual({ action: "retry" });
  });

  it("records a request too large as a step error", async () => {
    const { lambda } = client(() => {
      throw Object.assign(new Error("too large"), {
        name: "RequestTooLargeException",
        $metadata: { httpStatusCode: 413 },
      });
    });
    const failure = await new LambdaSandbox(lambda, "fn").run(request).catch((e: unknown) => e);
    expect(classifyFailure(failure)).toMatchObject({
      action: "record",
      code: "sandbox_request_too_large",
    });
  });

  it("rethrows what it does not understand", async () => {
    const missing = Object.assign(new Error("Function not found"), {
      name: "ResourceNotFoundException",
      $metadata: { httpStatusCode: 404 },
    });
    const { lambda } = client(() => {
      throw missing;
    });
    await expect(new LambdaSandbox(lambda, "fn").run(request)).rejects.toBe(missing);
  });
});

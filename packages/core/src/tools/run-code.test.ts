import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { classifyFailure } from "../errors";
import { MemoryBlobs } from "../testing/memory/memory-blobs";
import { failed, ok, scriptedSandbox } from "../testing/sandbox-fakes";
import { testToolContext } from "../testing/tool-context";
import { RunCodeInput, runCodeTool } from "./run-code";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("run_code", () => {
  it("runs the code with the namespace's limits and stores code, output and files by hash", async () => {
    const blobs = new MemoryBlobs();
    const sandbox = scriptedSandbox([
      ok(6, {
        stdout: "summing\n",
        files: [
          { path: "out.csv", encoding: "utf8", content: "a,b\n1,2\n", size: 8 },
          { path: "img.png", encoding: "base64", content: "AP8=", size: 2 },
        ],
      }),
    ]);
    const context = testToolContext({
      sandbox: sandbox.port,
      blobs,
      namespace: { sandbox_limits: { time_ms: 2_000 } },
    });

    const { value, details } = await runCodeTool.run(
      RunCodeInput().parse({
        language: "python",
        code: "sum(xs)",
        inputs: { xs: [1, 2, 3] },
        output: "all",
      }),
      context,
    );

    expect(sandbox.requests).toEqual([
      {
        v: 1,
        language: "python",
        code: "sum(xs)",
        inputs: { xs: [1, 2, 3] },
        files: [],
        limits: { time_ms: 2_000 },
      },
    ]);
    expect(value).toMatchObject({ result: 6, stdout: "summing\n", stderr: "" });
    const files = (value as { files: Array<Record<string, unknown>> }).files;
    expect(files[0]).toMatchObject({
      path: "out.csv",
      size: 8,
      sha256: sha("a,b\n1,2\n"),
      text: "a,b\n1,2\n",
    });
    expect(files[1]).toMatchObject({ path: "img.png", size: 2 });
    expect(files[1]).not.toHaveProperty("text");
    const record = details?.sandbox as Record<string, unknown>;
    expect(record.code).toEqual({ $ref: "s3", size: 7, sha256: sha("sum(xs)") });
    expect(record.stdout).toEqual({ $ref: "s3", size: 8, sha256: sha("summing\n") });
    expect(record.stderr).toBeNull();
    expect(
      blobs
        .keys()
        .map((k) => k.contentType)
        .sort(),
    ).toEqual(["image/png", "text/csv", "text/plain; charset=utf-8", "text/x-python"]);
    expect(await blobs.get(context.blobPrefix, sha("sum(xs)"))).toEqual(
      new TextEncoder().encode("sum(xs)"),
    );
  });

  it("gives the output variable the result, and keeps what the code printed and wrote in the commit", async () => {
    const sandbox = scriptedSandbox([
      ok(
        { total: 6 },
        {
          stdout: `${"x".repeat(3_000)}done\n`,
          stderr: "careful\n",
          files: [{ path: "out.txt", encoding: "utf8", content: "six", size: 3 }],
        },
      ),
    ]);
    const context = testToolContext({ sandbox: sandbox.port, blobs: new MemoryBlobs() });
    const { value, details } = await runCodeTool.run(
      RunCodeInput().parse({ language: "javascript", code: "({total: 6})" }),
      context,
    );
    expect(value).toEqual({ total: 6 });
    expect(details?.stdout_tail).toHaveLength(2_000);
    expect(details?.stdout_tail).toMatch(/x+done\n$/);
    expect(details?.stderr_tail).toBe("careful\n");
    expect(details?.files).toEqual([expect.objectContaining({ path: "out.txt", text: "six" })]);
    expect(details?.sandbox).toMatchObject({ stdout: { size: 3_005 } });
  });

  it("leaves the commit without output tails when the code printed nothing", async () => {
    const sandbox = scriptedSandbox([ok(null)]);
    const context = testToolContext({ sandbox: sandbox.port, blobs: new MemoryBlobs() });
    const { value, details } = await runCodeTool.run(
      RunCodeInput().parse({ language: "javascript", code: "null" }),
      context,
    );
    expect(value).toBeNull();
    expect(details).not.toHaveProperty("stdout_tail");
    expect(details).not.toHaveProperty("stderr_tail");
    expect(details).not.toHaveProperty("files");
  });

  it.each([
    ["timeout", "the code ran past its time limit"],
    ["memory_limit", "the code used more than its memory limit"],
    ["output_limit", "the code printed more than"],
    ["runtime_error", "ValueError: bad"],
  ] as const)("turns a %s into a step error the plan can recover from", async (code, message) => {
    const sandbox = scriptedSandbox([failed(code, message, { stdout: "partial" })]);
    const context = testToolContext({ sandbox: sandbox.port, blobs: new MemoryBlobs() });
    const error = await runCodeTool
      .run(RunCodeInput().parse({ language: "javascript", code: "x" }), context)
      .catch((e: unknown) => e);
    expect(classifyFailure(error)).toEqual({
      action: "record",
      code: `sandbox_${code}`,
      message: expect.stringContaining(message),
    });
    expect((error as { details: Record<string, unknown> }).details).toMatchObject({
      stdout_tail: "partial",
      sandbox: { error: { code } },
    });
  });

  it("asks for a retry of the step when the sandbox itself failed", async () => {
    const sandbox = scriptedSandbox([failed("internal", "the sandbox crashed")]);
    const context = testToolContext({ sandbox: sandbox.port, blobs: new MemoryBlobs() });
    const error = await runCodeTool
      .run(RunCodeInput().parse({ language: "javascript", code: "x" }), context)
      .catch((e: unknown) => e);
    expect(classifyFailure(error)).toEqual({ action: "retry" });
  });

  it.each([
    ["an unknown language", { language: "ruby", code: "1" }],
    ["empty code", { language: "python", code: "" }],
    ["an unknown field", { language: "python", code: "1", timeout: 5 }],
    ["an unknown output", { language: "python", code: "1", output: "stdout" }],
  ])("refuses %s before calling the sandbox", (_, input) => {
    expect(RunCodeInput().safeParse(input).success).toBe(false);
  });
});

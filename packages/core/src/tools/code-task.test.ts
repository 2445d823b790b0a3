import { describe, expect, it } from "vitest";
import { classifyFailure, type StepError } from "../errors";
import { MemoryBlobs } from "../testing/memory/memory-blobs";
import { failed, ok, scriptedLlm, scriptedSandbox } from "../testing/sandbox-fakes";
import { testToolContext } from "../testing/tool-context";
import { type CodeAttempt, CodeTaskInput, createCodeTaskTool } from "./code-task";

const write = (code: string) => ({ done: false, code, explanation: "writes it" });
const accept = { done: true, code: "", explanation: "the result answers the task" };

function setup(llmAnswers: unknown[], sandboxAnswers: Parameters<typeof scriptedSandbox>[0]) {
  const llm = scriptedLlm(llmAnswers);
  const sandbox = scriptedSandbox(sandboxAnswers);
  const context = testToolContext({
    llm: llm.session,
    sandbox: sandbox.port,
    blobs: new MemoryBlobs(),
  });
  return { llm, sandbox, context };
}

const input = (extra: Record<string, unknown> = {}) =>
  CodeTaskInput().parse({
    task: "Average of the numbers",
    inputs: { numbers: [1, 2, 3] },
    ...extra,
  });

describe("code_task", () => {
  it("writes code, runs it and returns the result the model accepts", async () => {
    const { llm, sandbox, context } = setup(
      [write("sum(numbers) / len(numbers)"), accept],
      [ok(2)],
    );

    const { value, details } = await createCodeTaskTool().run(input(), context);

    expect(value).toEqual({
      result: 2,
      code: "sum(numbers) / len(numbers)",
      language: "python",
      attempts: 1,
    });
    expect(sandbox.requests[0]).toMatchObject({
      language: "python",
      inputs: { numbers: [1, 2, 3] },
    });
    // The model saw the task, the input's shape and a sample, then the result to judge.
    expect(llm.conversations[0]?.[1]?.content).toContain("Task: Average of the numbers");
    expect(llm.conversations[0]?.[1]?.content).toContain("- numbers: array of 3 × number");
    expect(llm.conversations[1]?.at(-1)?.content).toContain("Its result (JSON): 2");
    const attempts = attemptsOf(details);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      round: 0,
      error: null,
      result: 2,
      verdict: { done: true },
    });
  });

  it("feeds an error back, runs the fix, and records both attempts", async () => {
    const { llm, context } = setup(
      [write("sum(numbers) / len(number)"), write("sum(numbers) / len(numbers)"), accept],
      [failed("runtime_error", "NameError: name 'number' is not defined"), ok(2)],
    );

    const { value, details } = await createCodeTaskTool().run(input(), context);

    expect(value).toMatchObject({ result: 2, code: "sum(numbers) / len(numbers)", attempts: 2 });
    expect(llm.conversations[1]?.at(-1)?.content).toContain(
      "NameError: name 'number' is not defined",
    );
    const attempts = attemptsOf(details);
    expect(attempts.map((a) => [a.code, a.error?.code ?? null])).toEqual([
      ["sum(numbers) / len(number)", "runtime_error"],
      ["sum(numbers) / len(numbers)", null],
    ]);
    expect(attempts[0]?.sandbox?.code.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("fixes a result that the model judges wrong", async () => {
    const { context } = setup(
      [
        write("sum(numbers)"),
        { done: false, code: "sum(numbers) / 3", explanation: "sum, not the average" },
        accept,
      ],
      [ok(6), ok(2)],
    );
    const { value } = await createCodeTaskTool().run(input(), context);
    expect(value).toMatchObject({ result: 2, attempts: 2 });
  });

  it("refuses code that cannot run in the sandbox without running it", async () => {
    const { sandbox, llm, context } = setup(
      [
        write("import scipy.stats\nscipy.stats.tmean(numbers)"),
        write("import statistics\nstatistics.mean(numbers)"),
        accept,
      ],
      [ok(2)],
    );
    const { details } = await createCodeTaskTool().run(input(), context);
    expect(sandbox.requests).toHaveLength(1);
    expect(llm.conversations[1]?.at(-1)?.content).toContain("scipy is not installed");
    const attempts = attemptsOf(details);
    expect(attempts[0]?.error?.code).toBe("refused");
  });

  it("stops after the bounded fix rounds with the last error and every attempt", async () => {
    const { sandbox, context } = setup(
      [write("a"), write("b"), write("c")],
      [
        failed("runtime_error", "E1"),
        failed("runtime_error", "E2"),
        failed("timeout", "E3: too slow"),
      ],
    );

    const error = (await createCodeTaskTool({ maxFixRounds: 2 })
      .run(input(), context)
      .catch((e: unknown) => e)) as StepError;

    expect(sandbox.requests).toHaveLength(3);
    expect(classifyFailure(error)).toMatchObject({ action: "record", code: "code_task_failed" });
    expect(error.message).toContain("after 3 attempts");
    expect(error.message).toContain("E3: too slow");
    const attempts = (error.details as { code_task: { attempts: CodeAttempt[] } }).code_task
      .attempts;
    expect(attempts.map((a) => a.error?.message)).toEqual(["E1", "E2", "E3: too slow"]);
  });

  it("lets the input ask for fewer rounds", async () => {
    const { sandbox, context } = setup([write("a")], [failed("runtime_error", "E1")]);
    const error = await createCodeTaskTool()
      .run(input({ max_fix_rounds: 0 }), context)
      .catch((e: unknown) => e);
    expect(sandbox.requests).toHaveLength(1);
    expect(classifyFailure(error)).toMatchObject({ code: "code_task_failed" });
  });

  it("fails when the model never accepts the last result", async () => {
    const { context } = setup(
      [
        write("a"),
        { done: false, code: "b", explanation: "still wrong" },
        { done: false, code: "c", explanation: "still wrong" },
      ],
      [ok(1), ok(1)],
    );
    const error = (await createCodeTaskTool({ maxFixRounds: 1 })
      .run(input(), context)
      .catch((e: unknown) => e)) as StepError;
    expect(error.message).toContain("does not answer the task");
  });

  it("retries the step when the sandbox itself fails", async () => {
    const { context } = setup([write("a")], [failed("unavailable", "no sandbox")]);
    const error = await createCodeTaskTool()
      .run(input(), context)
      .catch((e: unknown) => e);
    expect(classifyFailure(error)).toEqual({ action: "retry" });
  });

  it("asks for the json schema named code", async () => {
    const { session } = scriptedLlm([]);
    const seen: string[] = [];
    const spy = {
      ...session,
      json: async (options: { schemaName: string; purpose: string }) => {
        seen.push(`${options.purpose}/${options.schemaName}`);
        return accept;
      },
    } as typeof session;
    const sandbox = scriptedSandbox([ok(1)]);
    const context = testToolContext({ llm: spy, sandbox: sandbox.port, blobs: new MemoryBlobs() });
    await createCodeTaskTool()
      .run(input(), context)
      .catch(() => {});
    expect(seen[0]).toBe("code/code");
  });
});

/** The attempts a successful run put in the commit's details. */
function attemptsOf(details: Record<string, unknown> | undefined): CodeAttempt[] {
  return (details?.code_task as { attempts: CodeAttempt[] } | undefined)?.attempts ?? [];
}

/**
 * Text from the API that a terminal would act on: a goal, a final answer and a
 * model's streamed answer carrying escape sequences (clear the screen, retitle
 * the window, write the clipboard), an 8-bit CSI and a carriage return that
 * prints over a line. The `stackvm` process prints each as its escape and never
 * the control itself; its own colours stay (`packages/cli/src/controls.ts`).
 */
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";
import { runCli } from "./run-cli";

const t = useTestStack();
const cli = (args: string[], onStdout?: (soFar: string) => void) =>
  runCli(args, { STACKVM_URL: t.url, STACKVM_API_KEY: t.apiKey }, onStdout);

const ESC = "\u001b";
/** Clears the screen, retitles the window, writes the clipboard, 8-bit CSI, and prints over a line. */
const HOSTILE = `${ESC}[2J${ESC}]0;owned\u0007${ESC}]52;c;b3duZWQ=\u0007\u009b31mapproved\rREJECTED`;
/** Any character a terminal acts on but tab and line feed. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("stackvm with hostile text from the API", () => {
  it("prints a task's goal, title and final answer with their controls escaped", async () => {
    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: HOSTILE } }];
    const made = await t.api("POST", "/v1/tasks", { goal: `Goal ${HOSTILE}`, plan });
    expect(made.status, JSON.stringify(made.body)).toBe(202);
    const done = await t.waitForTask(made.body.task_id);
    expect(done.final_answer).toBe(HOSTILE);

    const shown = await cli(["task", made.body.task_id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toMatch(RAW_CONTROL);
    expect(shown.stdout).toContain("\\u001b[2J\\u001b]0;owned\\u0007");
    expect(shown.stdout).toContain("\\u009b31mapproved\\u000dREJECTED");

    const listed = await cli(["tasks", "--limit", "5"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toMatch(RAW_CONTROL);
    // The server's title already shows the goal's controls as U+FFFD.
    expect(listed.stdout).toContain("Goal \ufffd[2J\ufffd]0;owned\ufffd");
  });

  it("prints a model's streamed answer with its controls escaped, as it comes", async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => {
      release = r;
    });
    // The model holds its answer after the first pieces until the CLI showed them.
    t.llm.streaming = {
      chunkChars: 4,
      beforeChunk: (index, _text, request) =>
        request.schemaName === "text" && index === 2 ? released : undefined,
    };
    t.llm.on("plan", {
      reasoning: "one step",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "llm_generate",
            tool_params: { prompt: "Say it." },
            output_vars: ["final_answer"],
          },
        },
      ],
    });
    t.llm.on("text", `ok ${HOSTILE}`);
    let streamed = "";
    const run = await cli(["run", "--goal", "Say it."], (soFar) => {
      if (!streamed && soFar.includes("answer  [0] ")) {
        streamed = soFar;
        release();
      }
    });
    expect(run.code, run.stderr).toBe(0);
    expect(streamed).not.toBe("");
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    const lines = run.stdout.trim().split("\n");
    const written = lines.find((line) => line.startsWith("answer  [0] "));
    expect(written).toContain("ok \\u001b[2J\\u001b]0;owned\\u0007");
    expect(lines.at(-1)).toContain("\\u009b31mapproved\\u000dREJECTED");
  });

  it("refuses a name with an escape sequence before anything is stored", async () => {
    const before = await t.api("GET", "/v1/tasks?limit=100");
    const refused = await t.api("POST", "/v1/tasks", {
      name: `${ESC}]0;owned\u0007`,
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }],
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("control character U+001B at offset 0");
    const after = await t.api("GET", "/v1/tasks?limit=100");
    expect(after.body.tasks.length).toBe(before.body.tasks.length);
  });
});

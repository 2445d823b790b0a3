import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Client } from "../client";
import { createOut } from "../style";
import { followTask } from "./run";

const ANSWER = "Mango is great, and ripe in June.";

/** A client whose event stream is `events` (SSE text), and whose task is completed. */
function scripted(events: string): Client {
  return {
    url: "http://stackvm.test",
    async request<T>() {
      return {
        task_id: "tsk_1",
        status: "completed",
        branch: "main",
        final_answer: ANSWER,
        error: null,
        usage: { steps: 1, input_tokens: 3, output_tokens: 9, cost_usd: 0 },
      } as T;
    },
    async stream() {
      return new Response(events, { headers: { "content-type": "text/event-stream" } });
    },
  };
}

const sse = (event: string, data: unknown, id?: string) =>
  `${id ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

const commit = {
  commit_id: "b1-1",
  parent_id: "b1-0",
  branch: "main",
  type: "step",
  seq_no: 0,
  instruction: {
    seq_no: 0,
    type: "calling",
    parameters: { tool_name: "llm_generate", output_vars: ["final_answer"] },
  },
  inputs: null,
  outputs: { final_answer: ANSWER },
  pc_before: 0,
  pc_after: 1,
  error: null,
  llm_calls: [],
  duration_ms: 12,
  created_at: "2026-11-27T12:00:00.000Z",
};

const token = (text: string) => ({
  branch: "main",
  seq_no: 0,
  parent_id: "b1-0",
  final_answer: true,
  purpose: "llm_generate",
  text,
});

async function run(events: string): Promise<string[]> {
  const stream = new PassThrough();
  let printed = "";
  stream.on("data", (chunk) => {
    printed += String(chunk);
  });
  const out = createOut(stream as unknown as NodeJS.WriteStream);
  const code = await followTask({ client: scripted(events), out, err: out }, "tsk_1", false);
  expect(code).toBe(0);
  return printed.trim().split("\n");
}

describe("stackvm run's live answer", () => {
  it("ends the answer's line with the rest of the commit's answer when live text stopped short", async () => {
    // The stream sent the start of the text, then the commit (a reconnect, or a
    // batch that came late): the line shows the whole answer once.
    const lines = await run(
      sse("token", token("Mango ")) +
        sse("token", token("is g")) +
        sse("commit", commit, "e1") +
        sse("end", { task_id: "tsk_1", status: "completed" }),
    );
    const written = lines.filter((line) => line.startsWith("answer  [0] "));
    expect(written).toEqual([`answer  [0] ${ANSWER}`]);
  });

  it("adds nothing when the live text was the whole answer, or not the start of it", async () => {
    const whole = await run(
      sse("token", token(ANSWER)) + sse("commit", commit, "e1") + sse("end", {}),
    );
    expect(whole.filter((line) => line.startsWith("answer  [0] "))).toEqual([
      `answer  [0] ${ANSWER}`,
    ]);
    const other = await run(
      sse("token", token("Papaya")) + sse("commit", commit, "e1") + sse("end", {}),
    );
    expect(other.filter((line) => line.startsWith("answer  [0] "))).toEqual(["answer  [0] Papaya"]);
  });
});

/**
 * Answers as they are written, read by clients nobody here wrote, against the
 * local stack with the scripted LLM streaming its answers in chunks: the
 * official `openai` client calling a plan through `POST /v1/chat/completions`
 * (whole and streamed) and `GET /v1/models`, and the `eventsource` package
 * reading `event: token` from a task's events stream.
 */
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { EventSource } from "eventsource";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call } from "../support/plans";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let client: OpenAI;

const ANSWER = "Kyoto keeps some 1,600 temples; Nara's are older, and fewer.";
const PLAN = [call(0, "llm_generate", { prompt: "Compare Kyoto and Nara." }, ["final_answer"])];

/** A gate the scripted LLM waits at before a chunk of the free-text answer. */
function gate(at: number) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  t.llm.streaming = {
    chunkChars: 6,
    chunkDelayMs: 2,
    beforeChunk: (index, _text, request) =>
      request.schemaName === "text" && index === at ? opened : undefined,
  };
  return open;
}

beforeAll(async () => {
  t = await startTestStack({
    streaming: { chunkChars: 6, chunkDelayMs: 2 },
    // The token test holds the model's first chunk until its events stream has
    // said the task's status. On a loaded machine that took longer than the
    // stacks' 2 s per attempt: the attempt timed out, and the retry's text
    // followed the cut-off attempt's on the stream. What a watcher sees when an
    // attempt fails mid-answer is its own matter; this file is about the relay.
    env: { LLM_TIMEOUT_MS: "15000" },
  });
  client = new OpenAI({ apiKey: t.apiKey, baseURL: `${t.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await t?.stop();
});
beforeEach(() => {
  t.llm.reset();
  t.llm.on("plan", { reasoning: "one step writes the answer", plan: PLAN });
  t.llm.on("text", ANSWER);
});

describe("POST /v1/chat/completions with the openai client", () => {
  it("runs the last user message as a task and answers its final answer, naming the task", async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: "default",
        messages: [
          { role: "system", content: "Answer briefly." },
          { role: "user", content: "Which city has more temples?" },
          { role: "assistant", content: "Which two cities?" },
          { role: "user", content: "Compare Kyoto and Nara." },
        ],
      })
      .withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.choices[0]?.message.content).toBe(ANSWER);
    const taskId = response.headers.get("x-stackvm-task-id");
    expect(taskId).toMatch(/\S/);
    expect((data as unknown as { metadata: unknown }).metadata).toEqual({
      task_id: taskId,
      status: "completed",
    });
    // The run is a task like any other: listed, with its commits and its usage.
    const task = await t.api("GET", `/v1/tasks/${taskId}`);
    expect(task.body).toMatchObject({ goal: "Compare Kyoto and Nara.", status: "completed" });
    expect(data.usage?.prompt_tokens).toBe(task.body.usage.input_tokens);
    expect(data.usage?.completion_tokens).toBe(task.body.usage.output_tokens);
    const list = await t.api("GET", "/v1/tasks?limit=20");
    expect(list.body.tasks.map((x: { task_id: string }) => x.task_id)).toContain(taskId);
    const commits = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=10`);
    expect(commits.body.commits.length).toBeGreaterThanOrEqual(2);
    // The earlier messages reached the planner as the task's context.
    const planned = t.llm.requests.find((r) => r.schemaName === "plan")!;
    const prompt = planned.messages.map((m) => m.content).join("\n");
    expect(prompt).toContain("Which two cities?");
    expect(prompt).toContain("Answer briefly.");
    // A whole answer wants no live text: the task was never marked watched, so its
    // step published no token batches.
    const live = await t.stack.system.ports.items.query({ pk: `T#local#K#${taskId}#LIVE` });
    expect(live.items).toEqual([]);
  });

  it("streams the final answer while the step is still writing it", async () => {
    const release = gate(3);
    const stream = await client.chat.completions.create({
      model: "default",
      messages: [{ role: "user", content: "Compare Kyoto and Nara." }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let taskId: string | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      taskId ??= (chunk as unknown as { metadata?: { task_id: string } }).metadata?.task_id;
      const piece = chunk.choices[0]?.delta.content;
      if (piece) pieces.push(piece);
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
      if (pieces.length === 1 && piece) {
        // The model is held mid-answer: the text came before the step could commit.
        const task = await t.api("GET", `/v1/tasks/${taskId}`);
        expect(task.body.status).toBe("running");
        expect(task.body.final_answer).toBeNull();
        release();
      }
    }
    // Batched (150 ms) on the way: what came before the hold, then the rest.
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    expect(pieces.join("")).toBe(ANSWER);
    expect(finish).toBe("stop");
    const task = await t.api("GET", `/v1/tasks/${taskId}`);
    expect(task.body).toMatchObject({ status: "completed", final_answer: ANSWER });
    expect(usage?.total_tokens).toBe(task.body.usage.input_tokens + task.body.usage.output_tokens);
    // The streamed completion marked its task watched (a whole one does not, above).
    const live = await t.stack.system.ports.items.query({ pk: `T#local#K#${taskId}#LIVE` });
    expect(live.items.map((i) => i.sk)).toContain("WATCH");
  });

  it("sends a final answer no step streamed in one piece at the end", async () => {
    t.llm.on("plan", {
      reasoning: "assigned",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "forty-two" } }],
    });
    const stream = await client.chat.completions.create({
      model: "default",
      messages: [{ role: "user", content: "What is six times seven?" }],
      stream: true,
    });
    const pieces: string[] = [];
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (piece) pieces.push(piece);
    }
    expect(pieces).toEqual(["forty-two"]);
  });

  it("raises a run that fails as an API error that names the task", async () => {
    t.llm.on("text", { fault: "status", status: 401, message: "scripted: key revoked" });
    const failed = client.chat.completions.create({
      model: "default",
      messages: [{ role: "user", content: "Compare Kyoto and Nara." }],
    });
    await expect(failed).rejects.toMatchObject({
      status: 400,
      code: "task_failed",
      message: expect.stringMatching(/task \S+ .*failed/),
    });
  });

  it("answers an unknown model and a bad key in OpenAI's error shape", async () => {
    await expect(
      client.chat.completions.create({
        model: "no-such-namespace",
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({
      status: 404,
      code: "model_not_found",
      type: "not_found_error",
      message: expect.stringContaining("GET /v1/models"),
    });
    const stranger = new OpenAI({ apiKey: "svm_nobody_nothing", baseURL: `${t.url}/v1` });
    await expect(stranger.models.list()).rejects.toMatchObject({
      status: 401,
      type: "authentication_error",
    });
    const raw = await t.api("POST", "/v1/chat/completions", { model: "default", messages: [] });
    expect(raw.status).toBe(400);
    expect(raw.body).toEqual({
      error: {
        message: expect.stringContaining("messages"),
        type: "invalid_request_error",
        param: "messages",
        code: expect.any(String),
      },
    });
  });

  it("lists the namespaces as models", async () => {
    const put = await t.api("PUT", "/v1/namespaces/research", { allowed_tools: ["llm_generate"] });
    expect(put.status).toBeLessThan(300);
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(["default", "research"]));
  });
});

/** The first block of `lang` in docs/integrate.md's section `heading`. */
function docExample(heading: string, lang: string): string {
  const page = readFileSync(new URL("../../docs/integrate.md", import.meta.url), "utf8");
  const section = page.slice(page.indexOf(`### ${heading}\n`));
  const block = new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``).exec(section);
  if (!block) throw new Error(`no ${lang} block under '${heading}' in docs/integrate.md`);
  return block[1]!;
}

const run = promisify(execFile);

describe("docs/integrate.md's examples", () => {
  const env = () => ({ ...process.env, API: t.url, KEY: t.apiKey });

  it("streams with the curl example", async () => {
    const script = docExample("Call a plan as an OpenAI model", "sh");
    const { stdout } = await run("bash", ["-c", script], { env: env(), timeout: 60_000 });
    const data = stdout
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => line.slice(6));
    expect(data.at(-1)).toBe("[DONE]");
    const text = data
      .slice(0, -1)
      .map((d) => JSON.parse(d).choices[0]?.delta?.content ?? "")
      .join("");
    expect(text).toBe(ANSWER);
  });

  it("streams with the openai client example", async () => {
    const script = docExample("Call a plan as an OpenAI model", "js");
    // Beside the repository's node_modules, so that `import "openai"` resolves.
    const file = new URL(`../../.doc-example-${process.pid}.mjs`, import.meta.url);
    writeFileSync(file, script);
    try {
      const { stdout } = await run(process.execPath, [file.pathname], {
        env: env(),
        timeout: 60_000,
      });
      expect(stdout).toBe(ANSWER);
    } finally {
      rmSync(file, { force: true });
    }
  });
});

describe("event: token read by the eventsource package", () => {
  it("carries the text of an llm_generate step as it is written, before its commit", async () => {
    const release = gate(0);
    const created = await t.api("POST", "/v1/tasks", { goal: "Compare.", plan: PLAN });
    expect(created.status).toBe(202);
    const taskId: string = created.body.task_id;
    const key = t.apiKey;
    const source = new EventSource(`${t.url}/v1/tasks/${taskId}/events`, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${key}` } }),
    });
    const seen: Array<{ type: string; data: any }> = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no end event within 30 s")), 30_000);
      const keep = (type: string) => (event: MessageEvent) => {
        seen.push({ type, data: JSON.parse(event.data) });
        // The stream is open and the task watched: let the model write.
        if (type === "status") release();
        if (type === "end") {
          clearTimeout(timer);
          source.close();
          resolve();
        }
      };
      for (const type of ["token", "commit", "status", "end"]) {
        source.addEventListener(type, keep(type));
      }
    });
    const tokens = seen.filter((e) => e.type === "token").map((e) => e.data);
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.map((d) => d.text).join("")).toBe(ANSWER);
    const step = seen.find((e) => e.type === "commit" && e.data.seq_no === 0)!.data;
    for (const token of tokens) {
      expect(token).toMatchObject({
        branch: "main",
        seq_no: 0,
        purpose: "llm_generate",
        final_answer: true,
        parent_id: step.parent_id,
      });
    }
    // Every token came before the commit of its step, which holds the whole text.
    const lastToken = seen.findLastIndex((e) => e.type === "token");
    expect(lastToken).toBeLessThan(seen.indexOf(seen.find((e) => e.data === step)!));
    expect(step.outputs).toMatchObject({ final_answer: ANSWER });
  });
});

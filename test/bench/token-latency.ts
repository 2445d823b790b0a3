/**
 * How long a token takes from the scripted LLM to a client on the local stack
 * (`npm run bench:tokens`): the scripted server streams an `llm_generate`
 * answer that writes `final_answer` in chunks of 4 characters, 50 ms apart;
 * each chunk's send time is taken as it leaves the server, and its arrival at
 * two clients: an `eventsource` reader of the task's events (`event: token`)
 * and the `openai` client streaming `POST /v1/chat/completions`. A script, not
 * a timed test: the numbers go in the issue.
 *
 * Options: `--runs N` (tasks per client, default 3), `--chars N` (answer length, default 400).
 */
import { EventSource } from "eventsource";
import OpenAI from "openai";
import { call } from "../support/plans";
import { startTestStack, type TestStack } from "../support/stack";

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const RUNS = arg("--runs", 3);
const CHARS = arg("--chars", 400);
const CHUNK = 4;

const ANSWER = "Kyoto temples in autumn. ".repeat(Math.ceil(CHARS / 25)).slice(0, CHARS);
/** One model call whose text is the final answer, as it streams. */
const PLAN = [call(0, "llm_generate", { prompt: "Describe Kyoto." }, ["final_answer"])];

/** When each chunk of the answer left the server, by index. */
let sent: number[] = [];

/** Delays of every chunk inside pieces that arrived at the given times. */
function delays(arrivals: Array<{ at: number; text: string }>): number[] {
  const out: number[] = [];
  let position = 0;
  for (const { at, text } of arrivals) {
    const end = position + text.length;
    // Each chunk is whole once its last character arrived.
    for (let chunk = Math.floor(position / CHUNK); (chunk + 1) * CHUNK <= end; chunk++) {
      if ((chunk + 1) * CHUNK > position) out.push(at - sent[chunk]!);
    }
    position = end;
  }
  return out;
}

async function viaEvents(t: TestStack): Promise<number[]> {
  const created = await t.api("POST", "/v1/tasks", { goal: "Describe Kyoto.", plan: PLAN });
  const taskId: string = created.body.task_id;
  const arrivals: Array<{ at: number; text: string }> = [];
  const source = new EventSource(`${t.url}/v1/tasks/${taskId}/events`, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${t.apiKey}` } }),
  });
  await new Promise<void>((resolve) => {
    source.addEventListener("token", (event) => {
      const data = JSON.parse(event.data) as { text: string; final_answer: boolean };
      if (data.final_answer) arrivals.push({ at: performance.now(), text: data.text });
    });
    source.addEventListener("end", () => {
      source.close();
      resolve();
    });
  });
  return delays(arrivals);
}

async function viaOpenAi(t: TestStack): Promise<number[]> {
  const client = new OpenAI({ apiKey: t.apiKey, baseURL: `${t.url}/v1` });
  const stream = await client.chat.completions.create({
    model: "default",
    messages: [{ role: "user", content: "Describe Kyoto." }],
    stream: true,
  });
  const arrivals: Array<{ at: number; text: string }> = [];
  for await (const chunk of stream) {
    const text = chunk.choices[0]?.delta.content;
    if (text) arrivals.push({ at: performance.now(), text });
  }
  return delays(arrivals);
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return `median ${at(0.5).toFixed(0)} ms, p95 ${at(0.95).toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms (${sorted.length} chunks)`;
}

const t = await startTestStack({
  // The answer takes seconds to stream: well within the LLM timeout.
  env: { LLM_TIMEOUT_MS: "60000" },
  streaming: {
    chunkChars: CHUNK,
    chunkDelayMs: 50,
    beforeChunk: (index, _text, request) => {
      if (request.schemaName === "text") sent[index] = performance.now();
    },
  },
});
try {
  t.llm.on("plan", { reasoning: "one step", plan: PLAN });
  t.llm.on("text", ANSWER);
  const streaming = t.llm.streaming;
  const results: Record<string, number[]> = {
    "events stream (eventsource)": [],
    "chat completions (openai)": [],
  };
  for (let run = 0; run < RUNS; run++) {
    sent = [];
    t.llm.streaming = streaming;
    results["events stream (eventsource)"]!.push(...(await viaEvents(t)));
    sent = [];
    results["chat completions (openai)"]!.push(...(await viaOpenAi(t)));
  }
  console.log(
    `token delay, scripted LLM → client, local stack (${RUNS} tasks each, ${CHARS} chars in ${CHUNK}-char chunks 50 ms apart):`,
  );
  for (const [name, values] of Object.entries(results))
    console.log(`  ${name}: ${summary(values)}`);
} finally {
  await t.stop();
}

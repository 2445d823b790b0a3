/**
 * Prints the size of the planner's prompts for the default namespace's tools
 * (the built-ins and the knowledge tools): the first plan, its repair rounds, and
 * plan updates after a failed step (with the plan and variables they carry), each
 * in characters and by the session's conservative token estimate, with the room
 * it leaves for an answer in a server's context and whether the session would send
 * it (at least 256 tokens of room). `npx tsx scripts/prompt-sizes.ts`, or with
 * `CONTEXT=8192` for another context (default 4,096: llama.cpp's and Ollama's).
 */

import { repairExcerpt } from "../packages/core/src/llm/excerpt";
import { estimatePromptTokens } from "../packages/core/src/llm/tokens";
import type { Plan } from "../packages/core/src/plan/schema";
import { planMessages, replanMessages } from "../packages/core/src/planning/prompts";
import type { LlmMessage } from "../packages/core/src/ports/llm";
import { describeTool } from "../packages/core/src/tools/describe";
import { knowledgeTools } from "../packages/core/src/tools/knowledge/index";
import { builtinTools } from "../packages/core/src/tools/registry";

const CONTEXT = Number(process.env.CONTEXT ?? 4096);
const search = {} as Parameters<typeof knowledgeTools>[0];
const tools = [...builtinTools().values(), ...knowledgeTools(search)].map(describeTool);
const base = {
  goal: "Describe Kyoto for a first-time visitor",
  responseFormat: {},
  tools,
  inputs: {},
  today: "2026-11-27",
};
const generate = (seq_no: number, prompt: string, out: string, context?: string) => ({
  seq_no,
  type: "calling",
  parameters: {
    tool_name: "llm_generate",
    tool_params: { prompt, ...(context ? { context } : {}) },
    output_vars: [out],
  },
});
const plan = [
  {
    seq_no: 0,
    type: "reasoning",
    parameters: {
      chain_of_thoughts:
        "Gather sights and transport, then write a guide for a first-time visitor.",
      dependency_analysis: "3 needs 1 and 2",
    },
  },
  generate(
    1,
    "List the ten sights a first-time visitor to Kyoto should see, with one line each on why.",
    "sights",
  ),
  generate(
    2,
    "Describe how to get around Kyoto: buses, subway, bicycles, and passes.",
    "transport",
  ),
  generate(
    3,
    "Write a guide for a first-time visitor to Kyoto from these notes.",
    "final_answer",
    "${sights}\n${transport}",
  ),
] as Plan;
// A generated text as a variable: the prompt shows its first 500 characters.
const text =
  "Kinkaku-ji, the Golden Pavilion, is a Zen temple whose top two floors are covered in gold leaf. ".repeat(
    30,
  );
const problems =
  "- plan[2].parameters.tool_params (seq_no 2): unknown parameter 'text' for llm_generate Hint: llm_generate takes prompt, context, response_format\n" +
  "- plan[3] (seq_no 3): ${guide} is referenced before anything sets it Hint: assign it first or use an existing variable";
const refused = JSON.stringify({ reasoning: "x".repeat(400), plan });
/** What `rounds` repair rounds add: the start of the refused answer and its problems, each round. */
const repairs = (rounds: number): LlmMessage[] =>
  Array.from({ length: rounds }, () => [
    { role: "assistant" as const, content: repairExcerpt(refused) },
    {
      role: "user" as const,
      content: `That plan fails validation:\n${problems}\nAnswer the whole corrected JSON again.`,
    },
  ]).flat();

function size(name: string, messages: LlmMessage[]) {
  const chars = messages.reduce((n, m) => n + m.content.length, 0);
  const tokens = estimatePromptTokens(messages);
  const room = CONTEXT - tokens;
  const verdict =
    room >= 256 ? `sent, answer up to ${Math.min(2048, room)}` : "llm_context_exceeded";
  console.log(
    `${name.padEnd(44)} ${String(chars).padStart(6)} chars, ~${String(tokens).padStart(5)} tokens (estimate), room ${String(room).padStart(5)} of ${CONTEXT}: ${verdict}`,
  );
}

const first = planMessages(base);
size("plan", first);
size("plan, repair round 1", [...first, ...repairs(1)]);
size("plan, repair round 2", [...first, ...repairs(2)]);
const update = replanMessages({
  ...base,
  plan,
  pc: 3,
  variables: { sights: text, transport: text },
  suggestion: "shorten the context",
  error: { code: "llm_bad_request", message: "the LLM server answered 400", seq_no: 3 },
});
size("plan_update (4-step plan, 2 variables)", update);
size("plan_update, repair round 1", [...update, ...repairs(1)]);
size("plan_update, repair round 2", [...update, ...repairs(2)]);
const parts = Array.from({ length: 12 }, (_, i) => `part${i + 1}`);
const long = [
  plan[0]!,
  ...parts.map((name, i) =>
    generate(
      i + 1,
      `Step ${i + 1}: describe part ${i + 1} of Kyoto for a visitor in three sentences, with names and opening hours.`,
      name,
    ),
  ),
  generate(
    13,
    "Join the parts into one guide.",
    "final_answer",
    parts.map((p) => `\${${p}}`).join("\n"),
  ),
] as Plan;
size(
  "plan_update (14-step plan, 12 variables)",
  replanMessages({
    ...base,
    plan: long,
    pc: 13,
    variables: Object.fromEntries(parts.map((p) => [p, text])),
    suggestion: "shorten the context",
    error: { code: "llm_bad_request", message: "the LLM server answered 400", seq_no: 13 },
  }),
);

/**
 * Prints the size of the planner's first prompt and of a plan update's prompt for
 * the default namespace's tools (the built-ins and the knowledge tools): characters
 * and the session's conservative token estimate. `npx tsx scripts/prompt-sizes.ts`
 */

import type { Plan } from "../packages/core/src/plan/schema";
import { planMessages, replanMessages } from "../packages/core/src/planning/prompts";
import type { LlmMessage } from "../packages/core/src/ports/llm";
import { describeTool } from "../packages/core/src/tools/describe";
import { knowledgeTools } from "../packages/core/src/tools/knowledge/index";
import { builtinTools } from "../packages/core/src/tools/registry";

const search = {} as Parameters<typeof knowledgeTools>[0];
const tools = [...builtinTools().values(), ...knowledgeTools(search)].map(describeTool);
const goal =
  "Summarize the three most cited papers on retrieval-augmented generation and compare them";
const format = { lang: "English", format: "markdown" };
const plan: Plan = [
  {
    seq_no: 0,
    type: "reasoning",
    parameters: { chain_of_thoughts: "Search, then summarize.", dependency_analysis: "1 needs 0" },
  },
  {
    seq_no: 1,
    type: "calling",
    parameters: {
      tool_name: "vector_search",
      tool_params: { query: "retrieval-augmented generation" },
      output_vars: ["papers"],
    },
  },
  {
    seq_no: 2,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: {
        prompt: "Summarize and compare the three most cited papers",
        context: "${papers}",
      },
      output_vars: ["final_answer"],
    },
  },
] as Plan;

function size(name: string, messages: LlmMessage[]) {
  const chars = messages.reduce((n, m) => n + m.content.length, 0);
  const bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
  // The same conservative estimate as the session's (llm/tokens.ts): a token per 3 UTF-8 bytes, 4 per message.
  const tokens = Math.ceil(bytes / 3) + 4 * messages.length + 3;
  console.log(
    `${name}: ${chars} chars, ~${tokens} tokens (estimate), ~${Math.ceil(chars / 4)} at 4 chars/token`,
  );
}

const base = { goal, responseFormat: format, tools, inputs: {}, today: "2026-11-27" };
size("plan", planMessages(base));
size(
  "plan_update",
  replanMessages({
    ...base,
    plan,
    pc: 2,
    variables: {
      papers: [
        { chunk_id: "c1", text: "RAG (Lewis et al. 2020) combines a retriever with a generator." },
      ],
    },
    suggestion: "retry with a shorter context",
    error: { code: "llm_bad_request", message: "the LLM server answered 400", seq_no: 2 },
  }),
);

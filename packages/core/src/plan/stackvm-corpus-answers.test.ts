/**
 * The StackVM corpus (test/fixtures/stackvm-plans.json, see
 * test/stackvm-corpus.test.ts), second half: the complete plans our validator
 * accepts are run in the in-memory VM with a scripted LLM and scripted retrieval
 * answers, and each final answer is compared with what the original StackVM's
 * rules give for the same script (testing/stackvm-reference.ts). Prints
 * "K of S sampled plans gave the same answer"; fails on any difference.
 *
 * The script makes the data flow visible: a retrieval answers a marker made from
 * its (interpolated) query, and the LLM's answer names its instruction and every
 * marker it was sent, so a wrong branch, a lost interpolation or a wrong
 * output_vars mapping changes the final answer.
 *
 * Run: npx vitest run packages/core/src/plan/stackvm-corpus-answers.test.ts
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { KnowledgeSearch } from "../knowledge/search";
import { CreateTaskInput } from "../service/tasks";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { type StackvmScript, stackvmAnswer } from "../testing/stackvm-reference";
import { knowledgeTools } from "../tools/knowledge";
import { builtinTools } from "../tools/registry";
import { validatePlan } from "./validate";

type Instruction = { seq_no: number; type: string; parameters: Record<string, unknown> };

const corpus = JSON.parse(
  readFileSync(new URL("../../../../test/fixtures/stackvm-plans.json", import.meta.url), "utf8"),
) as { plans: Array<{ source: string; plan: Instruction[] }> };

/** A short stable mark of a text (FNV-1a). */
const marker = (text: string) => {
  let h = 0x811c9dc5;
  for (const c of text) h = Math.imul(h ^ c.codePointAt(0)!, 0x01000193) >>> 0;
  return `K${h.toString(16).padStart(8, "0")}`;
};
const markersIn = (text: string) => [...new Set(text.match(/K[0-9a-f]{8}/g) ?? [])].sort();

/** The script, with every LLM-decided jump going one way (each plan is run both ways). */
const scriptWith = (verdict: boolean): StackvmScript => ({
  generate(seqNo, sent, outputVars) {
    const base = `A${seqNo}[${markersIn(sent).join(",")}]`;
    if (outputVars.length < 2) return base;
    return JSON.stringify(Object.fromEntries(outputVars.map((name) => [name, `${base}.${name}`])));
  },
  condition: () => verdict,
  retrieve: retrieved,
});

/** What a retrieval answers: a chunk (vector_search) or a graph around a marker of the query. */
function retrieved(tool: string, query: string): unknown {
  const mark = marker(query);
  const chunk = {
    chunk_id: mark,
    text: `passage ${mark}`,
    knowledge_base: "docs",
    document_id: "d1",
    filename: "d1.md",
    position: 0,
    score: 1,
  };
  if (tool === "vector_search") return [chunk];
  return { entities: [{ name: mark, description: "entity" }], relationships: [], chunks: [chunk] };
}

/** Retrieval over the script, through the real knowledge tools. */
const search = {
  chunks: async (_scope: unknown, query: string) => ({
    calls: [],
    chunks: retrieved("vector_search", query),
  }),
  graph: async (_scope: unknown, query: string) => ({
    calls: [],
    ...(retrieved("retrieve_knowledge_graph", query) as object),
  }),
} as unknown as KnowledgeSearch;
const retrievalTools = knowledgeTools(search);
const tools = new Map(
  [...builtinTools(), ...retrievalTools.map((t) => [t.name, t] as const)].map(
    ([name, tool]) => [name, { input: tool.input }] as const,
  ),
);

/** The longest literal piece of a prompt: how the scripted LLM knows which instruction asks. */
const keyOf = (prompt: unknown) =>
  String(prompt)
    .split(/\$\{[^}]*\}/)
    .reduce((a, b) => (b.length > a.length ? b : a), "")
    .slice(0, 80);

/** The LLM of our VM, answering by the script for the instruction whose prompt it is sent. */
function scriptedLlm(plan: Instruction[], script: StackvmScript) {
  const asking = plan.flatMap(
    (i): Array<{ seq: number; key: string; outputVars: string[] | null }> => {
      const p = i.parameters;
      if (i.type === "jmp" && "condition_prompt" in p) {
        return [{ seq: i.seq_no, key: keyOf(p.condition_prompt), outputVars: null }];
      }
      if (i.type === "calling" && p.tool_name === "llm_generate") {
        const params = p.tool_params as Record<string, unknown>;
        return [
          { seq: i.seq_no, key: keyOf(params.prompt), outputVars: p.output_vars as string[] },
        ];
      }
      return [];
    },
  );
  return new FakeLlm((request) => {
    const sent = String(request.messages.at(-1)?.content ?? "");
    const found = asking.find((a) => sent.includes(a.key));
    if (!found) throw new Error(`the scripted LLM has no answer for: ${sent.slice(0, 200)}`);
    if (found.outputVars === null) {
      return JSON.stringify({ result: script.condition(found.seq, sent), explanation: "scripted" });
    }
    return script.generate(found.seq, sent, found.outputVars);
  });
}

const writesFinalAnswer = (plan: Instruction[]) =>
  plan.some((i) => i.type === "assign" && "final_answer" in i.parameters);

/** The complete plans the validator accepts (all of them: they are few). */
const sample = corpus.plans.flatMap(({ source, plan }, index) => {
  const result = validatePlan(plan, {
    tools,
    allowedTools: new Set(tools.keys()),
    inputs: new Set(),
  });
  return result.ok && writesFinalAnswer(plan)
    ? [{ name: `#${index} (${source})`, original: plan, ours: result.plan as Instruction[] }]
    : [];
});

describe("StackVM corpus plans run to StackVM's answers", () => {
  it("gives the original semantics' final answer for every sampled plan", async () => {
    const differ: string[] = [];
    for (const { name, original, ours } of sample) {
      for (const verdict of [true, false]) {
        const script = scriptWith(verdict);
        const expected = stackvmAnswer(original, script);
        const sys = memorySystem({ llm: scriptedLlm(ours, script), tools: retrievalTools });
        const { task } = await sys.tasks.create(
          "acme",
          CreateTaskInput.parse({ plan: original, inputs: {} }),
        );
        await sys.drain();
        const done = await sys.tasks.get("acme", task.task_id);
        if (done.status !== "completed" || done.final_answer !== expected) {
          differ.push(
            `${name}, jumps ${verdict}: ours ${JSON.stringify(done.final_answer ?? done.error)}, StackVM ${JSON.stringify(expected)}`,
          );
        }
      }
    }
    const same = sample.filter(({ name }) => !differ.some((d) => d.startsWith(`${name},`)));
    console.log(
      `StackVM corpus: ${same.length} of ${sample.length} sampled plans gave the same answer (each run with its conditional jumps true, then false)`,
    );
    expect(sample.length).toBeGreaterThanOrEqual(7);
    expect(differ).toEqual([]);
  });
});

/**
 * The StackVM corpus (test/fixtures/stackvm-plans.json, see
 * test/stackvm-corpus.test.ts), second half: the complete plans our validator
 * accepts are run in the in-memory VM with a scripted LLM and scripted retrieval
 * answers, and each final answer is compared with what the original StackVM's
 * rules give for the same script (testing/stackvm-reference.ts). Prints
 * "K of S sampled plans gave the same answer"; fails on any difference.
 *
 * Then the production plans kept in test/fixtures/stackvm-production-plans.json
 * (one or two for each reason a plan needs StackVM compatibility mode) run in
 * that mode, and each run must take the same path (seq_nos), set the same
 * variables with the same data in them, and end with the same final answer as
 * the original. The same comparison over all 876 production plans is how the
 * counts in test/stackvm-corpus.test.ts were taken.
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
import { CreateTaskInput } from "../service/task-input";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { type StackvmScript, stackvmAnswer, stackvmRun } from "../testing/stackvm-reference";
import { knowledgeTools } from "../tools/knowledge";
import { builtinTools } from "../tools/registry";
import { validatePlan } from "./validate";

type Instruction = { seq_no: number; type: string; parameters: Record<string, unknown> };

const fixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../../../test/fixtures/${name}`, import.meta.url), "utf8"),
  ) as { plans: Array<{ source: string; cause?: string; plan: Instruction[] }> };
const corpus = fixture("stackvm-plans.json");
const production = fixture("stackvm-production-plans.json");

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
} as unknown as Parameters<typeof knowledgeTools>[0];
const retrievalTools = knowledgeTools(search);
const tools = new Map(
  [...builtinTools(), ...retrievalTools.map((t) => [t.name, t] as const)].map(
    ([name, tool]) => [name, { input: tool.input }] as const,
  ),
);

/** The literal pieces of a prompt or context: how the scripted LLM knows which instruction asks. */
const literals = (text: unknown) =>
  String(text ?? "")
    .split(/\$\{[^}]*\}/)
    .filter((part) => part.trim() !== "");

/** The LLM of our VM, answering by the script for the instruction whose text it is sent. */
function scriptedLlm(plan: Instruction[], script: StackvmScript) {
  const asking = plan.flatMap(
    (i): Array<{ seq: number; parts: string[]; outputVars: string[] | null }> => {
      const p = i.parameters;
      if (i.type === "jmp" && "condition_prompt" in p) {
        const parts = [...literals(p.condition_prompt), ...literals(p.context)];
        return [{ seq: i.seq_no, parts, outputVars: null }];
      }
      // A calling, or an instruction typed as the tool (in either parameter form).
      const calling = i.type === "calling" || typeof p.tool_name === "string";
      const tool = calling ? p.tool_name : i.type;
      const params = (calling ? p.tool_params : p) as Record<string, unknown>;
      if (tool !== "llm_generate") return [];
      const outputVars = (p.output_vars ?? [p.output_var]) as string[];
      return [
        {
          seq: i.seq_no,
          parts: [...literals(params.prompt), ...literals(params.context)],
          outputVars,
        },
      ];
    },
  );
  return new FakeLlm((request) => {
    const sent = String(request.messages.at(-1)?.content ?? "");
    // Every piece must be sent; of those, the instruction with the most (then longest) pieces.
    const score = (parts: string[]) => [parts.length, parts.join("").length] as const;
    const found = asking
      .filter((a) => a.parts.every((part) => sent.includes(part)))
      .sort((a, b) => {
        const [x, y] = [score(a.parts), score(b.parts)];
        return y[0] - x[0] || y[1] - x[1];
      })[0];
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

/** The data a value carries: the retrieval markers and the LLM answers (`A3[`) in its text. */
const dataIn = (value: unknown) =>
  [
    ...new Set(
      (typeof value === "string" ? value : JSON.stringify(value)).match(/K[0-9a-f]{8}|A\d+\[/g),
    ),
  ].sort();
const kind = (value: unknown) =>
  value === undefined || value === null ? "none" : Array.isArray(value) ? "list" : typeof value;

describe("StackVM's production plans in compatibility mode", () => {
  it("take the original's path, set its variables and end with its answer", async () => {
    const differ: string[] = [];
    let runs = 0;
    for (const { source, cause, plan } of production.plans) {
      for (const verdict of [true, false]) {
        const script = scriptWith(verdict);
        let expected: ReturnType<typeof stackvmRun>;
        try {
          expected = stackvmRun(plan, script);
        } catch {
          continue; // this run fails in the original too: nothing to compare
        }
        runs++;
        const sys = memorySystem({ llm: scriptedLlm(plan, script), tools: retrievalTools });
        const { task } = await sys.tasks.create(
          "acme",
          CreateTaskInput.parse({ plan, plan_compat: "stackvm" }),
        );
        await sys.drain();
        const done = await sys.tasks.get("acme", task.task_id);
        const main = await sys.branches.get("acme", task.task_id, "main");
        const { commits } = await sys.branches.commits("acme", task.task_id, "main", 500, null);
        const path = commits.flatMap((c) => (c.type === "step" ? [c.seq_no] : [])).reverse();
        // The original keeps a name's stray spaces (" x"); compatibility mode trims them.
        const theirs = Object.fromEntries(
          [...expected.variables].map(([name, value]) => [name.trim(), dataIn(value)]),
        );
        const ours = Object.fromEntries(
          Object.entries(main.state.variables).map(([name, value]) => [name, dataIn(value)]),
        );
        const run = `${source} (${cause}), jumps ${verdict}`;
        if (done.status !== "completed") differ.push(`${run}: ${done.status} ${done.error}`);
        if (JSON.stringify(path) !== JSON.stringify(expected.path)) {
          differ.push(`${run}: path ${path} vs ${expected.path}`);
        }
        try {
          expect(ours).toEqual(theirs);
        } catch {
          differ.push(`${run}: variables ${JSON.stringify(ours)} vs ${JSON.stringify(theirs)}`);
        }
        if (kind(done.final_answer) !== kind(expected.finalAnswer)) {
          differ.push(
            `${run}: final answer ${kind(done.final_answer)} vs ${kind(expected.finalAnswer)}`,
          );
        } else if (done.final_answer !== expected.finalAnswer) {
          differ.push(
            `${run}: final answer ${JSON.stringify(done.final_answer)} vs ${JSON.stringify(expected.finalAnswer)}`,
          );
        }
      }
    }
    console.log(
      `StackVM production plans: ${runs - new Set(differ.map((d) => d.split(":")[0])).size} of ${runs} runs (${production.plans.length} plans, jumps true then false) ended as in the original`,
    );
    expect(runs).toBeGreaterThanOrEqual(2 * production.plans.length - 2);
    expect(differ).toEqual([]);
  });
});

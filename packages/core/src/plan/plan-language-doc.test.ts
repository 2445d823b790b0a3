/**
 * Every plan in `docs/plan-language.md` is what the page says it is. Each
 * fenced `json` block there is a plan, preceded by a comment that states what
 * to expect of it:
 *
 *     <!-- check: {"inputs": {...}, "final_answer": ..., "invalid": [...], "warnings": [...], "plan_compat": "stackvm"} -->
 *
 * `invalid` lists problem codes the validator must report (the plan is refused);
 * otherwise the plan must pass with no warning but those listed, and with a
 * `final_answer` it is run to that answer in the in-memory VM (only plans that
 * need no LLM and no sandbox are run). The namespace's own tools the page
 * calls (`crm.find_customer`, `refund`, `average`) are declared here with the
 * inputs the page gives them. `plan_compat` checks and runs the plan in that
 * mode (StackVM compatibility mode); absent, strict.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { CreateTaskInput } from "../service/task-input";
import { memorySystem } from "../testing/memory-system";
import { knowledgeTools } from "../tools/knowledge";
import { builtinTools } from "../tools/registry";
import { webTools } from "../tools/web";
import { validatePlan } from "./validate";

const PAGE = new URL("../../../../docs/plan-language.md", import.meta.url);

interface Check {
  inputs?: Record<string, unknown>;
  final_answer?: unknown;
  invalid?: string[];
  warnings?: string[];
  plan_compat?: "strict" | "stackvm";
}

interface Example {
  line: number;
  plan: unknown;
  check: Check;
}

/** The `json` blocks of the page with the check comment before each. */
function examples(text: string): Example[] {
  const lines = text.split("\n");
  const found: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== "```json") continue;
    const end = lines.findIndex((line, j) => j > i && line.trim() === "```");
    const body = lines.slice(i + 1, end).join("\n");
    let k = i - 1;
    while (k >= 0 && lines[k]!.trim() === "") k--;
    const comment = /^<!-- check: (.*) -->$/.exec(lines[k]?.trim() ?? "");
    if (!comment) throw new Error(`the json block at line ${i + 1} has no check comment before it`);
    found.push({ line: i + 1, plan: JSON.parse(body), check: JSON.parse(comment[1]!) });
    i = end;
  }
  return found;
}

const page = readFileSync(PAGE, "utf8");
const all = examples(page);

/** The built-ins, the knowledge and web tools, and the page's namespace tools. */
const tools = new Map<string, { input: z.ZodType }>([
  ...[
    ...builtinTools(),
    ...knowledgeTools({} as Parameters<typeof knowledgeTools>[0]).map((t) => [t.name, t] as const),
    ...webTools().map((t) => [t.name, t] as const),
  ].map(([name, tool]) => [name, { input: tool.input }] as const),
  ["crm.find_customer", { input: z.object({ email: z.string() }) }],
  ["refund", { input: z.strictObject({ order_id: z.string() }) }],
  ["average", { input: z.strictObject({ numbers: z.array(z.number()) }) }],
]);

const validate = (example: Example) =>
  validatePlan(example.plan, {
    tools,
    allowedTools: new Set(tools.keys()),
    inputs: new Set(Object.keys(example.check.inputs ?? {})),
    compat: example.check.plan_compat ?? "strict",
  });

const codes = (list: Array<{ code: string }>) => list.map((p) => p.code);
const label = (e: Example) => `line ${e.line}`;

describe("the plans of docs/plan-language.md", () => {
  it("has examples of every kind, each with its check", () => {
    expect(all.length).toBeGreaterThanOrEqual(25);
    expect(all.filter((e) => e.check.invalid).length).toBeGreaterThanOrEqual(8);
    expect(all.filter((e) => "final_answer" in e.check).length).toBeGreaterThanOrEqual(4);
  });

  it.each(all.filter((e) => !e.check.invalid).map((e) => [label(e), e] as const))(
    "accepts the plan at %s",
    (_, example) => {
      const result = validate(example);
      expect(result.ok ? [] : codes(result.problems)).toEqual([]);
      expect(codes(result.warnings)).toEqual(example.check.warnings ?? []);
    },
  );

  it.each(all.filter((e) => e.check.invalid).map((e) => [label(e), e] as const))(
    "refuses the plan at %s with the problem it names",
    (_, example) => {
      const result = validate(example);
      expect(result.ok).toBe(false);
      expect(result.ok ? [] : codes(result.problems)).toEqual(
        expect.arrayContaining(example.check.invalid!),
      );
    },
  );

  it.each(all.filter((e) => "final_answer" in e.check).map((e) => [label(e), e] as const))(
    "runs the plan at %s to the answer it states",
    async (_, example) => {
      const sys = memorySystem();
      const { task } = await sys.tasks.create(
        "acme",
        CreateTaskInput.parse({
          plan: example.plan,
          inputs: example.check.inputs ?? {},
          ...(example.check.plan_compat ? { plan_compat: example.check.plan_compat } : {}),
        }),
      );
      await sys.drain();
      const done = await sys.tasks.get("acme", task.task_id);
      expect(done.error).toBeNull();
      expect(done).toMatchObject({ status: "completed" });
      expect(done.final_answer).toEqual(example.check.final_answer);
    },
  );

  it("shows every instruction and every built-in tool in a plan that passes", () => {
    const instructions = all
      .filter((e) => !e.check.invalid)
      .flatMap((e) => e.plan as Array<{ type: string; parameters: Record<string, unknown> }>);
    const kinds = new Set(
      instructions.map((i) =>
        i.type === "jmp" ? ("target_seq" in i.parameters ? "jmp target" : "jmp condition") : i.type,
      ),
    );
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining([
        "assign",
        "calling",
        "jmp condition",
        "jmp target",
        "reasoning",
        "wait",
      ]),
    );
    const called = new Set(instructions.map((i) => i.parameters.tool_name));
    for (const name of [...builtinTools().keys(), "vector_search", "retrieve_knowledge_graph"]) {
      expect(called, name).toContain(name);
    }
    expect([...called].some((name) => typeof name === "string" && name.includes("."))).toBe(true);
  });
});

/**
 * The eval's dataset: cases that each run as an ordinary task through the HTTP
 * API, with what to check in its answer and the answers a scripted LLM gives
 * for it (so that `npm test` runs every case without a model). The cases live
 * as JSON in `test/eval/cases/*.json`, one file per feature of the plan
 * language; `docs/eval.md` says how to write one.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import * as z from "zod";
import { Checker } from "./checkers";

/**
 * How the eval plans a case's task: `up_front`, the whole plan before the
 * first step, or `adaptive`, the next instruction or few after each result.
 * The eval runs every case in each mode it is asked for (both by default), so
 * a case does not choose one; its script answers either (`when` on the text
 * "planned adaptively" tells an adaptive planning call apart).
 */
export const PlanningMode = z.enum(["up_front", "adaptive"]);
export type PlanningMode = z.infer<typeof PlanningMode>;

/** The folder of the shipped cases. */
export const CASES_DIR = resolve(import.meta.dirname, "cases");

/**
 * Whom a scripted answer is for, by what the request asks: the planner's
 * `plan` and `plan_update`, a conditional jump's `jmp_condition`, `code_task`'s
 * `code`, ingest's `knowledge_graph`, `llm_generate` with several output
 * variables (`output_vars`), any other `llm_generate` (text or JSON), and the
 * eval's own LLM judge (`judge`).
 */
export const ScriptedPurpose = z.enum([
  "plan",
  "plan_update",
  "jmp_condition",
  "code",
  "knowledge_graph",
  "output_vars",
  "llm_generate",
  "judge",
]);
export type ScriptedPurpose = z.infer<typeof ScriptedPurpose>;

/**
 * One answer of the scripted LLM for a case. Entries are tried in order; the
 * first of the request's purpose whose `when` the request contains answers, and
 * is used up unless `repeat` is set. A `fault` entry answers with that error.
 */
export const ScriptedAnswer = z
  .object({
    purpose: ScriptedPurpose,
    when: z.string().min(1).optional().describe("text the request must contain"),
    answer: z.unknown().optional(),
    fault: z.enum(["500", "bad_json"]).optional(),
    repeat: z.boolean().optional(),
  })
  .strict()
  .refine((a) => (a.answer === undefined) !== (a.fault === undefined), {
    message: "give exactly one of answer and fault",
  });
export type ScriptedAnswer = z.infer<typeof ScriptedAnswer>;

/** A document a case ingests into a knowledge base of its own before its task runs. */
export const EvalDocument = z
  .object({
    filename: z.string().min(1).max(200),
    content_type: z.string().default("text/markdown"),
    content: z.string().min(1),
  })
  .strict();

/** A code tool a case saves in its namespace (`POST /v1/namespaces/{name}/tools`). */
export const EvalCodeTool = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/),
    description: z.string().min(1),
    input_schema: z.record(z.string(), z.unknown()),
    language: z.enum(["javascript", "python"]),
    code: z.string().min(1),
  })
  .strict();

/** Something of this machine a case needs besides the stack. */
export const Need = z.enum([
  /** The eval's loopback HTTP server (`{{fixture_url}}`), which the stack must be allowed to reach. */
  "fixture_server",
]);
export type Need = z.infer<typeof Need>;

export const EvalCase = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, "1 to 40 of a-z, 0-9 and -"),
    feature: z.string().min(1).max(40),
    description: z.string().optional(),
    /** Always sent: the planner plans from it, and every LLM call of the task sees it. */
    goal: z.string().min(1).max(10_000),
    /** A plan to run instead of planning one; its LLM steps still ask the model. */
    plan: z.array(z.unknown()).optional(),
    inputs: z.record(z.string(), z.unknown()).optional(),
    response_format: z.record(z.string(), z.unknown()).optional(),
    budget: z.record(z.string(), z.number()).optional(),
    documents: z.array(EvalDocument).optional(),
    code_tools: z.array(EvalCodeTool).optional(),
    needs: z.array(Need).optional(),
    /** Answers given, in order, each time the task waits for a person (`ask_human`). */
    human_answers: z.array(z.unknown()).optional(),
    /** How the task should end: most cases complete; a few must fail, with the `error` checker. */
    expect: z.enum(["completed", "failed"]).default("completed"),
    check: Checker,
    scripted: z.array(ScriptedAnswer).default([]),
  })
  .strict();
export type EvalCase = z.infer<typeof EvalCase>;

/** Where the placeholders of a case point, filled in before it runs. */
export interface Placeholders {
  /** The base URL of the eval's loopback HTTP server, without a trailing slash. */
  fixture_url?: string;
}

/**
 * The cases of a file or of every `*.json` in a folder (in name order), checked:
 * a case that does not parse, or an id used twice, throws naming the file and
 * the problem.
 */
export async function loadCases(path: string = CASES_DIR): Promise<EvalCase[]> {
  const files = path.endsWith(".json")
    ? [path]
    : (await readdir(path))
        .filter((f) => f.endsWith(".json"))
        .sort()
        .map((f) => join(path, f));
  const cases: EvalCase[] = [];
  for (const file of files) {
    const raw: unknown = JSON.parse(await readFile(file, "utf8"));
    const list = z.array(z.unknown()).safeParse(raw);
    if (!list.success) throw new Error(`${file}: a case file is a JSON array of cases`);
    list.data.forEach((item, index) => {
      const parsed = EvalCase.safeParse(item);
      if (!parsed.success) {
        const where = (item as { id?: unknown })?.id ?? `[${index}]`;
        throw new Error(`${file}: case ${String(where)}: ${z.prettifyError(parsed.error)}`);
      }
      cases.push(parsed.data);
    });
  }
  const seen = new Set<string>();
  for (const c of cases) {
    if (seen.has(c.id)) throw new Error(`case id '${c.id}' is used twice: ids must be unique`);
    seen.add(c.id);
  }
  return cases;
}

/**
 * The case with `{{name}}` placeholders filled in everywhere (goal, plan,
 * inputs, scripted answers). A placeholder without a value throws.
 *
 * @example
 * fillPlaceholders(c, { fixture_url: "http://127.0.0.1:4100" })
 */
export function fillPlaceholders(c: EvalCase, values: Placeholders): EvalCase {
  const text = JSON.stringify(c).replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const value = values[name as keyof Placeholders];
    if (value === undefined) throw new Error(`case ${c.id}: no value for {{${name}}}`);
    return value;
  });
  return JSON.parse(text) as EvalCase;
}

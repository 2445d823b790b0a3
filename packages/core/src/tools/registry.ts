/**
 * The tools a plan can call: the built-in ones and a namespace's code tools, and
 * how they are described to the planner and on `GET /v1/tools`.
 */
import * as z from "zod";
import { ValidationError } from "../errors";
import type { NamespaceConfig } from "../model";
import { codeTaskTool } from "./code-task";
import { httpRequestTool } from "./http-request";
import { llmGenerateTool } from "./llm-generate";
import { runCodeTool } from "./run-code";
import type { Tool } from "./tool";

/**
 * Every built-in tool, in the order the planner sees them. New built-ins are
 * added HERE: `run_code` (tools/run-code.ts) and `code_task` (tools/code-task.ts)
 * go in this list when they exist.
 */
const BUILTIN_TOOLS: readonly Tool[] = [
  llmGenerateTool,
  httpRequestTool,
  runCodeTool,
  codeTaskTool,
];

const builtins: ReadonlyMap<string, Tool> = new Map(BUILTIN_TOOLS.map((tool) => [tool.name, tool]));

/** The built-in tools by name. */
export function builtinTools(): ReadonlyMap<string, Tool> {
  return builtins;
}

/** What the planner and `GET /v1/tools` see of a tool. */
export interface ToolDescription {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the input, from the tool's zod schema. */
  input_schema: Record<string, unknown>;
}

/**
 * Describes a tool, with its input schema as JSON Schema.
 *
 * @example
 * describeTool(builtinTools().get("llm_generate")!).input_schema.required // ["prompt"]
 */
export function describeTool(tool: Tool): ToolDescription {
  // io "input": describe what the planner writes (fields with defaults are optional).
  const { $schema: _, ...schema } = z.toJSONSchema(tool.input, {
    io: "input",
    unrepresentable: "any",
  });
  return { name: tool.name, description: tool.description, input_schema: schema };
}

export interface ResolvedTools {
  /** Every tool that exists for the namespace: built-ins and its code tools. */
  all: Map<string, Tool>;
  /** The names a plan in the namespace may call. */
  allowed: Set<string>;
}

/**
 * The tools of a namespace. Built-ins are allowed when `allowed_tools` lists them;
 * the namespace's code tools are allowed without being listed. Names in
 * `allowed_tools` that match no tool are left out of `allowed`.
 *
 * @throws ValidationError `tool_name_taken` when a code tool has a built-in's name.
 */
export function resolveTools(
  namespace: NamespaceConfig,
  codeTools: readonly Tool[],
): ResolvedTools {
  const all = new Map<string, Tool>(builtins);
  for (const tool of codeTools) {
    if (all.has(tool.name)) {
      throw new ValidationError(
        "tool_name_taken",
        `namespace '${namespace.name}' has a code tool named '${tool.name}', which is ${builtins.has(tool.name) ? "a built-in tool" : "defined twice"}; rename the code tool`,
      );
    }
    all.set(tool.name, tool);
  }
  const allowed = new Set(namespace.allowed_tools.filter((name) => all.has(name)));
  for (const tool of codeTools) allowed.add(tool.name);
  return { all, allowed };
}

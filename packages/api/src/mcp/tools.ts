/**
 * A tenant's namespaces and saved templates as MCP tools. A namespace is the
 * tool `run_{namespace}`, whose one argument is the goal; a template is the
 * tool named by its id (`tpl_…`), whose arguments are the inputs its plan reads
 * (`planInputs`). The names are stable (a namespace's name and a template's id
 * never change) and valid by MCP's rules for tool names (1 to 128 of
 * `A-Za-z0-9_-.`; these use `a-z0-9_-` only, which every client takes), and
 * the two kinds cannot collide: a template id starts `tpl_`, a namespace tool
 * `run_`.
 */
import { type CreateTaskInput, type Namespace, planInputs, type Template } from "@stackvm/core";
import { CreateTaskInput as CreateTaskInputSchema } from "@stackvm/core/api-records";
import * as z from "zod";
import type { ApiDeps } from "../deps";

/** The namespace tool's prefix: `run_default` runs a goal in the namespace `default`. */
const NAMESPACE_TOOL = /^run_([a-z0-9_-]{1,64})$/;
/** A template tool's name is the template's id. */
const TEMPLATE_TOOL = /^tpl_[0-9a-f]{24}$/;
/** Templates per page of `tools/list` (the namespaces come on the first page). */
export const TEMPLATES_PER_PAGE = 100;
/** The longest goal a namespace tool takes, as `POST /v1/tasks` does. */
const MAX_GOAL_CHARS = 10_000;
/** How much of a template's goal its tool's description quotes. */
const GOAL_IN_DESCRIPTION = 500;

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: {
    type: "object";
    properties: Record<string, object>;
    required: string[];
    additionalProperties: false;
  };
  annotations: { title: string; readOnlyHint: false; openWorldHint: true };
}

/** What a tool runs: a goal in a namespace, or a template's plan with its inputs. */
export type ToolTarget =
  | { kind: "namespace"; namespace: string }
  | { kind: "template"; template: Template; inputs: string[] };

/** An argument the client sent that the tool does not take as it is. */
export class ToolArgumentsError extends Error {}

export function namespaceTool(ns: Namespace): McpTool {
  const title = `Run a goal in ${ns.name}`;
  const described = ns.description
    .slice(0, GOAL_IN_DESCRIPTION)
    .trim()
    .replace(/[.\s]+$/, "");
  const about = described ? ` ${described}.` : "";
  return {
    name: `run_${ns.name}`,
    title,
    description:
      `Runs a goal as a StackVM task in the namespace '${ns.name}':${about} A plan is written for the goal and ` +
      "run step by step (progress is sent as it commits); the answer is the task's final answer.",
    inputSchema: {
      type: "object",
      properties: {
        goal: {
          type: "string",
          minLength: 1,
          maxLength: MAX_GOAL_CHARS,
          description: "What to do, in plain language",
        },
      },
      required: ["goal"],
      additionalProperties: false,
    },
    annotations: { title, readOnlyHint: false, openWorldHint: true },
  };
}

export function templateTool(template: Template): McpTool {
  const inputs = planInputs(template.plan);
  const goal = template.goal.slice(0, GOAL_IN_DESCRIPTION);
  const title = `Saved plan: ${goal.slice(0, 80)}`;
  return {
    name: template.template_id,
    title,
    description:
      `Runs the plan saved for the goal "${goal}" (namespace '${template.namespace}') as a StackVM task, ` +
      "with no planning: each argument is an input the plan reads. The answer is the task's final answer.",
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        inputs.map((name) => [
          name,
          { description: `The plan's input '${name}' (any JSON value; text for most plans)` },
        ]),
      ),
      required: inputs,
      additionalProperties: false,
    },
    annotations: { title, readOnlyHint: false, openWorldHint: true },
  };
}

/** One page of the tenant's tools: the namespaces and the first templates, then more templates. */
export async function listTools(
  deps: Pick<ApiDeps, "namespaces" | "templates">,
  tenant: string,
  cursor: string | undefined,
): Promise<{ tools: McpTool[]; nextCursor?: string }> {
  // An empty cursor is no cursor (clients send one for the first page): the namespaces come with it.
  const first = !cursor;
  const [namespaces, page] = await Promise.all([
    first ? deps.namespaces.list(tenant) : Promise.resolve([]),
    deps.templates.list(tenant, { limit: TEMPLATES_PER_PAGE, cursor: cursor || null }),
  ]);
  return {
    tools: [...namespaces.map(namespaceTool), ...page.templates.map(templateTool)],
    ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}),
  };
}

/**
 * The tool a name stands for, of this tenant; null for a name that is no tool
 * of its (another tenant's template or namespace reads as missing).
 */
export async function resolveTool(
  deps: Pick<ApiDeps, "namespaces" | "templates">,
  tenant: string,
  name: string,
): Promise<ToolTarget | null> {
  try {
    const namespace = NAMESPACE_TOOL.exec(name)?.[1];
    if (namespace !== undefined) {
      await deps.namespaces.get(tenant, namespace);
      return { kind: "namespace", namespace };
    }
    if (TEMPLATE_TOOL.test(name)) {
      const template = await deps.templates.get(tenant, name);
      return { kind: "template", template, inputs: planInputs(template.plan) };
    }
    return null;
  } catch (error) {
    if ((error as { kind?: unknown }).kind === "not_found") return null;
    throw error;
  }
}

const GoalArguments = z.object({ goal: z.string().min(1).max(MAX_GOAL_CHARS) }).strict();

/** The task a call of the tool starts; throws ToolArgumentsError saying what is wrong with the arguments. */
export function taskInputOf(
  target: ToolTarget,
  args: Record<string, unknown> | undefined,
  toolName: string,
): CreateTaskInput {
  const given = args ?? {};
  const metadata = { source: "mcp", mcp_tool: toolName };
  if (target.kind === "namespace") {
    const parsed = GoalArguments.safeParse(given);
    if (!parsed.success) {
      throw new ToolArgumentsError(
        `${toolName} takes one argument, goal (text of 1 to ${MAX_GOAL_CHARS} characters): ${issuesOf(parsed.error)}`,
      );
    }
    return CreateTaskInputSchema.parse({
      goal: parsed.data.goal,
      namespace: target.namespace,
      metadata,
    });
  }
  const expected = new Set(target.inputs);
  const unknown = Object.keys(given).filter((key) => !expected.has(key));
  const missing = target.inputs.filter((key) => !Object.hasOwn(given, key));
  if (unknown.length > 0 || missing.length > 0) {
    const takes =
      target.inputs.length > 0 ? `it takes ${target.inputs.join(", ")}` : "it takes no arguments";
    const wrong = [
      unknown.length > 0 ? `unknown argument(s) ${unknown.slice(0, 10).join(", ")}` : "",
      missing.length > 0 ? `missing ${missing.join(", ")}` : "",
    ].filter(Boolean);
    throw new ToolArgumentsError(`${toolName}: ${wrong.join("; ")} (${takes})`);
  }
  const parsed = CreateTaskInputSchema.safeParse({
    goal: target.template.goal,
    plan: target.template.plan,
    namespace: target.template.namespace,
    inputs: given,
    metadata,
  });
  if (!parsed.success) {
    throw new ToolArgumentsError(`${toolName}: ${issuesOf(parsed.error)}`);
  }
  return parsed.data;
}

function issuesOf(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`)
    .join("; ");
}

/**
 * Check 3 of plan validation: a calling names a tool that exists and that the
 * task's namespace allows, and its literal tool params match the tool's input
 * schema. Params that hold references are only known at run time, so for those
 * the check is that the required keys are there (and the literal keys beside them
 * are valid); the VM checks the rest when it runs the step.
 */
import * as z from "zod";
import { label, listNames, type ProblemList, planPath } from "./problems";
import { findReferences, type Lookup, resolveReferences } from "./references";

/** A tool as validation needs it: only its input schema. */
export interface ToolInput {
  input: z.ZodType;
}

/** A calling instruction as far as it could be read. */
export interface ToolCall {
  index: number;
  seqNo: number | null;
  toolName: string;
  /** The raw tool_params (an object, or undefined when left out). */
  params: Record<string, unknown> | undefined;
}

/** No variables: used on params without references, where it only removes `\${` escapes. */
const NO_VARIABLES: Lookup = () => ({ found: false });

/** Reports an unknown, forbidden or badly called tool. */
export function checkToolCall(
  call: ToolCall,
  tools: ReadonlyMap<string, ToolInput>,
  allowed: ReadonlySet<string>,
  problems: ProblemList,
  warnings: ProblemList,
): void {
  const where = { seq_no: call.seqNo, path: planPath(call.index, ["parameters", "tool_name"]) };
  const usable = [...allowed].filter((name) => tools.has(name)).sort();
  const choose =
    usable.length === 0
      ? "This namespace allows no tools; ask its owner to allow the tools the plan needs."
      : `Use one of the tools this namespace allows: ${listNames(usable)}.`;
  const tool = tools.get(call.toolName);
  if (!tool) {
    problems.add({
      ...where,
      code: "unknown_tool",
      message: `The calling at ${label(call)} names the tool "${call.toolName}", which does not exist.`,
      hint: choose,
    });
    return;
  }
  if (!allowed.has(call.toolName)) {
    problems.add({
      ...where,
      code: "tool_not_allowed",
      message: `The calling at ${label(call)} uses the tool "${call.toolName}", which this task's namespace does not allow.`,
      hint: `${choose} Or ask the namespace's owner to allow "${call.toolName}".`,
    });
    return;
  }
  checkParams(call, tool.input, problems, warnings);
}

function checkParams(
  call: ToolCall,
  schema: z.ZodType,
  problems: ProblemList,
  warnings: ProblemList,
): void {
  const params = call.params ?? {};
  const hint = `Give "${call.toolName}" the inputs it takes: ${describeInput(schema)}.`;
  const report = (path: readonly PropertyKey[], code: string, message: string) =>
    problems.add({
      seq_no: call.seqNo,
      path: planPath(call.index, ["parameters", "tool_params", ...path]),
      code,
      message: `The tool params of ${label(call)} do not fit "${call.toolName}": ${message}.`,
      hint,
    });
  const reportIssues = (issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[]) => {
    for (const issue of issues) {
      const path = [...prefix, ...issue.path];
      const at = path.length === 0 ? "" : ` (at ${planPath(null, path)})`;
      report(path, "invalid_tool_params", `${issue.message}${at}`);
    }
  };

  const object = schema instanceof z.ZodObject ? schema : null;
  const shape = object ? (object.shape as Record<string, z.ZodType>) : null;
  const strict = object ? isStrict(object) : false;
  if (shape) {
    for (const key of Object.keys(params)) {
      if (!Object.hasOwn(shape, key) && !strict) {
        warnings.add({
          seq_no: call.seqNo,
          path: planPath(call.index, ["parameters", "tool_params", key]),
          code: "unknown_tool_param",
          message: `"${call.toolName}" takes no input "${key}" (at ${label(call)}); it is dropped.`,
          hint,
        });
      }
    }
  }

  if (findReferences(params).length === 0) {
    const result = safeParse(schema, resolveReferences(params, NO_VARIABLES));
    if (result && !result.success) reportIssues(result.error.issues, []);
    return;
  }
  if (!shape) return;
  for (const [key, field] of Object.entries(shape)) {
    if (!Object.hasOwn(params, key)) {
      if (safeParse(field, undefined)?.success === false) {
        report([key], "missing_tool_param", `the required input "${key}" is missing`);
      }
    } else if (findReferences(params[key]).length === 0) {
      const result = safeParse(field, resolveReferences(params[key], NO_VARIABLES));
      if (result && !result.success) reportIssues(result.error.issues, [key]);
    }
  }
  if (strict) {
    for (const key of Object.keys(params)) {
      if (!Object.hasOwn(shape, key))
        report([key], "invalid_tool_params", `it takes no input "${key}"`);
    }
  }
}

/**
 * A tool's schema is someone else's code: one with async refinements, or a transform
 * that throws, cannot be checked ahead of the run. Undefined means "not checkable";
 * the VM checks the input when the step runs.
 */
function safeParse(schema: z.ZodType, value: unknown): z.ZodSafeParseResult<unknown> | undefined {
  try {
    return schema.safeParse(value);
  } catch {
    return undefined;
  }
}

function isStrict(schema: z.ZodObject): boolean {
  return schema._zod.def.catchall?._zod.def.type === "never";
}

/** "prompt (required), context" for an object schema; a pointer to the schema otherwise. */
function describeInput(schema: z.ZodType): string {
  if (!(schema instanceof z.ZodObject)) return "see its input schema (GET /v1/tools)";
  const fields = Object.entries(schema.shape as Record<string, z.ZodType>).map(([key, field]) =>
    safeParse(field, undefined)?.success === false ? `${key} (required)` : key,
  );
  return fields.length === 0 ? "no inputs" : listNames(fields);
}

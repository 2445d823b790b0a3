/**
 * The plan language as a JSON Schema for the server's constrained decoder: the
 * `response_format` of a plan request. The loose schema generated from
 * `PlanAnswer` says only "an array of objects", so a grammar-constrained server
 * (llama.cpp, Ollama, vLLM) guaranteed no more, and small models wrote
 * instructions without `seq_no` or `type`. This one is the language itself:
 * instructions as a union on `type`, each with its own parameters; a calling per
 * tool of the namespace with `tool_name` fixed to it and `tool_params` its input
 * schema; `output_vars` as variable names.
 *
 * It stays within what both OpenAI's structured outputs and llama.cpp's
 * json-schema-to-grammar accept: `anyOf` (not `oneOf`), `enum`, `properties`,
 * `required`, `additionalProperties`, `items`, integer bounds and one simple
 * `pattern`; a tool's input schema is stripped of what a grammar cannot follow or
 * would blow up (`maxLength: 200000` unrolls into 200,000 rules), and every typed
 * parameter also takes a `${name}` reference, as the language allows. Free
 * values (`assign`, `context`) keep it out of OpenAI's strict mode, which the
 * adapter sees (`isStrictJsonSchema`). `validatePlan` still checks every answer.
 */
import type { ToolDescription } from "../tools/registry";

type Schema = Record<string, unknown>;

const seqNo: Schema = { type: "integer", minimum: 0 };
const variableName: Schema = { type: "string", pattern: "^[A-Za-z0-9_]+$" };
/** A `${name}` reference, or any text: a typed parameter may take one. */
const reference: Schema = { type: "string" };

/** Keywords of a tool's input schema that go to the grammar; the rest are dropped. */
const KEPT = new Set([
  "type",
  "properties",
  "required",
  "items",
  "enum",
  "const",
  "anyOf",
  "oneOf",
  "additionalProperties",
  "minimum",
  "maximum",
  "minItems",
]);

/**
 * The precise plan schema for these tools; with `update`, a plan update's answer
 * (its `resume_at` too).
 *
 * @example
 * planWireSchema(tools, false).properties.plan.items.anyOf.length // 5 + one per tool
 */
export function planWireSchema(tools: readonly ToolDescription[], update: boolean) {
  const instruction = (type: string, parameters: Schema, extra: Schema = {}): Schema => ({
    type: "object",
    properties: { seq_no: seqNo, type: { type: "string", enum: [type] }, parameters, ...extra },
    required: ["seq_no", "type", "parameters"],
    additionalProperties: false,
  });
  const object = (properties: Schema, required: string[]): Schema => ({
    type: "object",
    properties,
    required,
    additionalProperties: false,
  });
  const callings = tools.map((tool) =>
    instruction(
      "calling",
      object(
        {
          tool_name: { type: "string", enum: [tool.name] },
          tool_params: toolParams(tool.input_schema),
          output_vars: { type: "array", items: variableName },
        },
        ["tool_name", "tool_params"],
      ),
      { group: { type: "string", pattern: "^[A-Za-z0-9_-]+$" } },
    ),
  );
  const variants = [
    instruction(
      "reasoning",
      object(
        { chain_of_thoughts: { type: "string" }, dependency_analysis: { type: "string" } },
        [],
      ),
    ),
    instruction("assign", { type: "object" }),
    ...callings,
    instruction(
      "jmp",
      object(
        {
          condition_prompt: { type: "string" },
          context: {},
          jump_if_true: seqNo,
          jump_if_false: seqNo,
        },
        ["condition_prompt", "jump_if_true", "jump_if_false"],
      ),
    ),
    instruction("jmp", object({ target_seq: seqNo }, ["target_seq"])),
    instruction("wait", {
      anyOf: [
        object({ seconds: { anyOf: [{ type: "number", minimum: 1 }, reference] } }, ["seconds"]),
        object({ until: { type: "string" } }, ["until"]),
      ],
    }),
  ];
  return object(
    {
      reasoning: { type: "string" },
      plan: { type: "array", minItems: 1, items: { anyOf: variants } },
      ...(update ? { resume_at: seqNo } : {}),
    },
    update ? ["reasoning", "plan", "resume_at"] : ["reasoning", "plan"],
  );
}

/** A tool's input schema as the grammar gets it: an object, whatever the tool declared. */
function toolParams(schema: Schema): Schema {
  const kept = tidy(schema);
  return kept.type === "object" ? kept : { type: "object" };
}

/** The schema with only grammar keywords, `oneOf` as `anyOf`, typed values also taking a reference. */
function tidy(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!KEPT.has(key)) continue;
    if (key === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Schema>).map(([name, sub]) => [
          name,
          referable(tidy(sub)),
        ]),
      );
    } else if (key === "items" && value && typeof value === "object") {
      out.items = referable(tidy(value as Schema));
    } else if (key === "anyOf" || key === "oneOf") {
      out.anyOf = (value as Schema[]).map(tidy);
    } else if (key === "additionalProperties" && value && typeof value === "object") {
      out.additionalProperties = referable(tidy(value as Schema));
    } else {
      out[key] = value;
    }
  }
  return out;
}

/**
 * A value that may also be written as a `${name}` reference: anything but text.
 * An enum of strings stays an enum: a reference there is rare, and the enum is
 * what keeps a small model to the tool's choices.
 */
function referable(schema: Schema): Schema {
  if (Object.keys(schema).length === 0 || schema.type === "string") return schema;
  if (
    Array.isArray(schema.anyOf) &&
    (schema.anyOf as Schema[]).some((s) => s.type === "string" && !("enum" in s))
  ) {
    return schema;
  }
  return { anyOf: [schema, reference] };
}

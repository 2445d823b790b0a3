/**
 * Code tools: programs saved in a namespace (typically the final code of a
 * `code_task`, through `POST /v1/namespaces/{name}/tools`) that plans call like
 * any tool. The tool's input, checked against its JSON Schema, becomes the
 * program's inputs; the program runs in the sandbox; its result is the tool's.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import { ValidationError } from "../errors";
import { compileJsonSchema, loadJsonSchemaCompiler } from "../json-schema/compile";
import { MAX_CODE_CHARS, SandboxLanguage } from "../sandbox/files";
import type { ToolSource } from "./registry";
import { callSandbox, sandboxFailureError } from "./sandbox-call";
import type { Tool } from "./tool";
import { ToolDescriptionField, ToolNameField } from "./tool-fields";

/** What a code tool is made of: the body of `POST /v1/namespaces/{name}/tools`. */
export const CodeToolDefinition = buildOnce(() =>
  z
    .object({
      name: ToolNameField(),
      description: ToolDescriptionField(),
      input_schema: z.record(z.string(), z.unknown()).refine((schema) => schema.type === "object", {
        message:
          'input_schema must be a JSON Schema of an object ({"type": "object", "properties": {...}})',
      }),
      language: SandboxLanguage(),
      code: z.string().min(1).max(MAX_CODE_CHARS),
    })
    .strict(),
);
export type CodeToolDefinition = z.infer<ReturnType<typeof CodeToolDefinition>>;

/**
 * Builds the tool of a saved program. The JSON Schema compiler must be loaded
 * (`loadJsonSchemaCompiler`; the code tools' source loads it).
 *
 * @throws ValidationError `invalid_code_tool` when the definition or its input schema is unusable.
 * @example
 * const tool = codeTool({ name: "add", description: "Adds a and b", input_schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }, language: "python", code: "a + b" });
 */
export function codeTool(definition: {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  language: "javascript" | "python";
  code: string;
}): Tool<Record<string, unknown>> {
  // Only the definition's own fields: a stored record also carries its keys and dates.
  const parsed = CodeToolDefinition().safeParse({
    name: definition.name,
    description: definition.description,
    input_schema: definition.input_schema,
    language: definition.language,
    code: definition.code,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ValidationError(
      "invalid_code_tool",
      `code tool '${definition.name}': ${issue?.path.join(".") || "definition"}: ${issue?.message ?? "invalid"}`,
    );
  }
  const { name, description, language, code } = parsed.data;
  let input: z.ZodType<Record<string, unknown>>;
  try {
    input = compileJsonSchema(parsed.data.input_schema, "input_schema") as z.ZodType<
      Record<string, unknown>
    >;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(
      "invalid_code_tool",
      `code tool '${name}': its input_schema is not a JSON Schema that can check inputs: ${(error as Error).message}`,
    );
  }
  return {
    name,
    description,
    input,
    source: "code",
    inputSchema: parsed.data.input_schema,
    async run(toolInput, context) {
      const run = await callSandbox(context, { language, code, inputs: toolInput });
      if (run.response.error) throw sandboxFailureError(run, `code tool '${name}'`);
      return {
        value: run.response.result,
        details: { sandbox: run.record, ...(run.files.length ? { files: run.files } : {}) },
      };
    },
  };
}

/** The registry's source of code tools: one tool per stored record. */
export const codeToolSource: ToolSource = {
  kind: "code",
  async tools(_tenant, _namespace, record) {
    await loadJsonSchemaCompiler();
    return [codeTool(record as unknown as Parameters<typeof codeTool>[0])];
  },
};

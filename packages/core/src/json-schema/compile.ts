/**
 * Tenant- and server-supplied JSON Schemas turned into zod schemas, with the
 * compiler (Ajv and RE2, `ajv-compile.ts`) loaded on first need.
 *
 * Checking a value is synchronous (tools, the plan checker and the VM all
 * speak zod), but loading the compiler is not: it is a dynamic `import()`, a
 * chunk of its own in a function's bundle, so that a cold start does not parse
 * 280 KB that most steps and requests never use. Every async path that may
 * compile a schema awaits {@link loadJsonSchemaCompiler} first (the tool
 * sources, the checks of a plan that asks a person with a schema, the resume of
 * such a question); {@link compileJsonSchema} called before it is a wiring bug
 * and says so, never a refusal of the tenant's schema.
 */
import type * as z from "zod";
import { StackVMError, ValidationError } from "../errors";
import { loadOnce } from "../load-once";
import { schemaBoundsProblem } from "./bounds";

type Compiler = typeof import("./ajv-compile");

let compiler: Compiler | undefined;
const loadCompiler = loadOnce((): Promise<Compiler> => import("./ajv-compile"));

/**
 * Loads the JSON Schema compiler once per process; later calls return at once.
 * A load that failed is tried again by the next call.
 *
 * @example
 * await loadJsonSchemaCompiler();
 * compileJsonSchema({ type: "boolean" }, "the schema").safeParse(true).success // true
 */
export async function loadJsonSchemaCompiler(): Promise<void> {
  compiler ??= await loadCompiler();
}

/** Whether the compiler is loaded (a process that never compiled a schema has not). */
export function jsonSchemaCompilerLoaded(): boolean {
  return compiler !== undefined;
}

/**
 * Compiles a schema a tenant or tool server supplied into the zod schema that
 * checks values against it; the same schema text is compiled once. A schema
 * out of bounds is refused before the compiler is needed.
 *
 * @throws ValidationError `invalid_schema`, naming `what` and the reason, for a
 *   schema out of bounds, with a pattern RE2 cannot run, or that Ajv refuses.
 * @throws StackVMError `json_schema_compiler_not_loaded` (internal) when
 *   {@link loadJsonSchemaCompiler} was not awaited first.
 * @example
 * await loadJsonSchemaCompiler();
 * compileJsonSchema({ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } }, "input_schema")
 *   .safeParse({ s: `${"a".repeat(10_000)}!` }).success // false, in linear time
 */
export function compileJsonSchema(schema: Record<string, unknown>, what: string): z.ZodType {
  const problem = schemaBoundsProblem(schema);
  if (problem) throw new ValidationError("invalid_schema", `${what}: ${problem}`);
  if (!compiler) {
    throw new StackVMError(
      "internal",
      "json_schema_compiler_not_loaded",
      `${what} was compiled before the JSON Schema compiler was loaded: await loadJsonSchemaCompiler() on this path first`,
    );
  }
  return compiler.compileWithAjv(schema, what);
}

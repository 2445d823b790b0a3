/**
 * The JSON Schema compiler itself (Ajv and RE2, about 280 KB minified), in a
 * module of its own that `compile.ts` imports on first need: most steps and
 * requests never compile a schema, and a function's cold start would otherwise
 * parse it and build Ajv's meta-schemas.
 *
 * Tenant- and server-supplied JSON Schemas, compiled once and checked with a
 * linear-time regular-expression engine. A schema is first held to its bounds
 * (`schemaBoundsProblem`, in compile.ts), then compiled by Ajv (JSON Schema 2020-12;
 * draft-07's `definitions` pointers work too) into a function, kept in a cache
 * keyed by the schema's text so the same schema is compiled once per process.
 * The result is a zod schema, since tools, the plan checker and the VM all speak
 * zod: for an object schema a `z.object` whose fields are checked one by one (the
 * plan checker reports a missing or wrong input by name), the whole schema
 * checked after.
 */
import { createHash } from "node:crypto";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import * as z from "zod";
import { ValidationError } from "../errors";
import { linearRegExp } from "./linear-regexp";
import { uniqueItemsKeyword } from "./unique-items";

/** How many compiled schemas a process keeps before it starts a fresh cache. */
const CACHE_SIZE = 500;

// Built with the first schema: Ajv compiles its meta-schemas when it is made.
let ajv: Ajv2020 | undefined;
const cache = new Map<string, z.ZodType>();

function newAjv(): Ajv2020 {
  const fresh = new Ajv2020({
    // Unknown keywords and formats are annotations, as JSON Schema says; tool
    // servers write plenty of them.
    strict: false,
    validateFormats: false,
    allErrors: false,
    code: { regExp: linearRegExp },
  });
  // Ajv's own compares every pair of items: quadratic in a tenant's array.
  fresh.removeKeyword("uniqueItems");
  fresh.addKeyword(uniqueItemsKeyword);
  return fresh;
}

/**
 * Compiles a schema a tenant or tool server supplied into the zod schema that
 * checks values against it; the same schema text is compiled once. Called
 * through `compileJsonSchema` (compile.ts), which checks the schema's bounds
 * first and says what it throws.
 */
export function compileWithAjv(schema: Record<string, unknown>, what: string): z.ZodType {
  const text = JSON.stringify(schema);
  const known = cache.get(text);
  if (known) return known;
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  const id = `urn:stackvm:schema:${createHash("sha256").update(text).digest("hex")}`;
  if (cache.size >= CACHE_SIZE) {
    // Ajv keeps every schema it compiled: a fresh instance lets them go.
    cache.clear();
    ajv = undefined;
  }
  let compiled: z.ZodType;
  try {
    compiled = zodOf({ ...rest, $id: id }, id);
  } catch (error) {
    // Ajv registers a schema under its $id before it compiles it: one refused
    // stayed registered, and the same schema sent again (a tenant's retry) was
    // refused for "already exists" instead of its own reason.
    ajv?.removeSchema(id);
    throw new ValidationError(
      "invalid_schema",
      `${what} is not a JSON Schema that can check values: ${(error as Error).message}`,
    );
  }
  cache.set(text, compiled);
  return compiled;
}

function zodOf(schema: Record<string, unknown>, id: string): z.ZodType {
  ajv ??= newAjv();
  const instance = ajv;
  const whole = instance.compile(schema);
  const properties = schema.properties;
  if (schema.type !== "object" || !isObject(properties))
    return z.unknown().superRefine(check(whole));
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const shape: Record<string, z.ZodType> = {};
  for (const key of Object.keys(properties)) {
    const field = instance.getSchema(`${id}#/properties/${pointerKey(key)}`);
    if (!field) throw new Error(`the property '${key}' cannot be compiled`);
    shape[key] = required.has(key)
      ? z.unknown().superRefine(present(field))
      : z.unknown().superRefine(check(field)).optional();
  }
  const object =
    schema.additionalProperties === false ? z.strictObject(shape) : z.looseObject(shape);
  return object.superRefine(check(whole));
}

type Refinement = (value: unknown, ctx: z.RefinementCtx) => void;

function check(validate: ValidateFunction): Refinement {
  return (value, ctx) => {
    if (validate(value)) return;
    // A field's issue stops the parse there: the whole schema's check would say it again.
    for (const error of validate.errors ?? []) ctx.addIssue({ ...issueOf(error), continue: false });
  };
}

function present(validate: ValidateFunction): Refinement {
  const inner = check(validate);
  return (value, ctx) => {
    if (value === undefined) {
      ctx.addIssue({ code: "custom", message: "Invalid input: required", continue: false });
    } else inner(value, ctx);
  };
}

function issueOf(error: ErrorObject): { code: "custom"; path: PropertyKey[]; message: string } {
  const path: PropertyKey[] = error.instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  if (missing !== undefined) path.push(missing);
  return {
    code: "custom",
    path,
    message: `Invalid input: ${error.message ?? "does not match the schema"}`,
  };
}

function pointerKey(key: string): string {
  return encodeURIComponent(key.replaceAll("~", "~0").replaceAll("/", "~1"));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A task's answer schema: `response_format.answer_schema`, a JSON Schema the
 * final answer must validate against (the chat face's `response_format`
 * `json_object` and `json_schema` become one). The planner is told (goal-text.ts),
 * the `llm_generate` that writes `final_answer` asks the model with it, and the
 * step that sets `final_answer` checks it: an answer held as JSON text is
 * parsed, and one that does not validate fails the step with
 * `final_answer_invalid`, which a plan update can repair.
 */
import { StepError, ValidationError } from "../errors";
import { compileJsonSchema, loadJsonSchemaCompiler } from "../json-schema/compile";
import type { ResponseFormat } from "../model";
import { ANSWER_SCHEMA_KEY } from "../record-fields";

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** The answer schema a task's response format carries, if any. */
export function answerSchemaOf(format: ResponseFormat): Record<string, unknown> | undefined {
  const schema = format[ANSWER_SCHEMA_KEY];
  return isObject(schema) ? schema : undefined;
}

/**
 * Refuses, at the task's start, an answer schema that is not an object or does
 * not compile (400 naming `response_format.answer_schema`).
 */
export async function checkAnswerSchema(format: ResponseFormat): Promise<void> {
  if (!(ANSWER_SCHEMA_KEY in format)) return;
  const schema = format[ANSWER_SCHEMA_KEY];
  if (!isObject(schema)) {
    throw new ValidationError(
      "invalid_schema",
      'response_format.answer_schema must be a JSON Schema object, e.g. {"type": "object"}',
    );
  }
  await loadJsonSchemaCompiler();
  compileJsonSchema(schema, "response_format.answer_schema");
}

/** A JSON text as a model writes it: maybe in a code fence, maybe with spaces around. */
function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/i.exec(text);
  try {
    return { ok: true, value: JSON.parse(fenced ? fenced[1]! : text) };
  } catch {
    return { ok: false };
  }
}

/**
 * The final answer as the schema wants it: the value itself when it validates,
 * or the JSON a string holds when that validates.
 *
 * @throws StepError `final_answer_invalid`, saying what does not validate.
 */
export async function checkFinalAnswer(
  value: unknown,
  schema: Record<string, unknown>,
): Promise<unknown> {
  await loadJsonSchemaCompiler();
  const check = compileJsonSchema(schema, "response_format.answer_schema");
  const direct = check.safeParse(value);
  if (direct.success) return value;
  let issues = direct.error.issues;
  if (typeof value === "string") {
    const parsed = parseJsonText(value);
    if (!parsed.ok) {
      throw new StepError(
        "final_answer_invalid",
        "final_answer must be JSON that validates against the task's response_format.answer_schema, and it is text that is not JSON: write it with llm_generate and a JSON response_format, or assign the JSON value",
        { schema, answer: value.slice(0, 500) },
      );
    }
    const inner = check.safeParse(parsed.value);
    if (inner.success) return parsed.value;
    issues = inner.error.issues;
  }
  const said = issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join(".") : "(the answer)"}: ${i.message}`)
    .join("; ");
  throw new StepError(
    "final_answer_invalid",
    `final_answer does not validate against the task's response_format.answer_schema: ${said}`,
    { schema },
  );
}

/**
 * The form of an `ask_human` question, built from the JSON Schema of its
 * answer: a field for a string, a number, an integer, a boolean or an enum, or
 * one field per property of an object made of those (its `required` marked).
 * Any other schema (arrays, nesting, `oneOf`, references…) is answered as JSON
 * in a text area. The server checks the answer against the schema in any case;
 * the form only saves the person from typing JSON.
 */

type Schema = Record<string, unknown>;

/** One input of the form. */
export type Field =
  | {
      kind: "string" | "number" | "integer" | "boolean";
      name: string;
      label: string;
      required: boolean;
      description: string | null;
    }
  | {
      kind: "enum";
      name: string;
      label: string;
      required: boolean;
      description: string | null;
      options: unknown[];
    };

/** How the question is answered. */
export type AnswerForm =
  | { mode: "value"; field: Field }
  | { mode: "object"; fields: Field[] }
  | { mode: "json" };

/** What the inputs hold: text (numbers and enum choices too, as typed or picked) or a checkbox. */
export type FieldValues = Record<string, string | boolean>;

/** The name of the single field of a question that is not an object. */
export const VALUE_FIELD = "answer";

const SIMPLE = new Set(["string", "number", "integer", "boolean"]);

/** A field for a simple schema, or null when it needs JSON. */
function fieldOf(schema: unknown, name: string, label: string, required: boolean): Field | null {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return null;
  const s = schema as Schema;
  const description = typeof s.description === "string" ? s.description : null;
  const title = typeof s.title === "string" ? s.title : label;
  if (Array.isArray(s.enum) && s.enum.length > 0) {
    return { kind: "enum", name, label: title, required, description, options: s.enum };
  }
  if (typeof s.type === "string" && SIMPLE.has(s.type)) {
    return {
      kind: s.type as Field["kind"] & string,
      name,
      label: title,
      required,
      description,
    } as Field;
  }
  return null;
}

/** The form for a question's schema (a string when it has none). */
export function answerForm(schema: Schema | null | undefined): AnswerForm {
  const s = schema ?? { type: "string" };
  const single = fieldOf(s, VALUE_FIELD, "Answer", true);
  if (single) return { mode: "value", field: single };
  if (s.type === "object" && typeof s.properties === "object" && s.properties !== null) {
    const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
    const fields: Field[] = [];
    for (const [name, property] of Object.entries(s.properties as Schema)) {
      const field = fieldOf(property, name, name, required.has(name));
      if (!field) return { mode: "json" };
      fields.push(field);
    }
    if (fields.length > 0) return { mode: "object", fields };
  }
  return { mode: "json" };
}

/** The inputs' starting values: empty text, unchecked boxes. */
export function initialValues(form: AnswerForm): FieldValues {
  const fields = form.mode === "value" ? [form.field] : form.mode === "object" ? form.fields : [];
  return Object.fromEntries(fields.map((f) => [f.name, f.kind === "boolean" ? false : ""]));
}

/** One field's value, or a problem in words; `undefined`: left empty (and not required). */
function fieldValue(
  field: Field,
  raw: string | boolean | undefined,
): { value?: unknown; problem?: string } {
  if (field.kind === "boolean") return { value: raw === true };
  const text = typeof raw === "string" ? raw : "";
  if (text.trim() === "") {
    if (field.kind === "string" && text !== "") return { value: text };
    return field.required ? { problem: `${field.label} is required` } : {};
  }
  if (field.kind === "enum") {
    const index = Number(text);
    return Number.isInteger(index) && index >= 0 && index < field.options.length
      ? { value: field.options[index] }
      : { problem: `pick one of the choices for ${field.label}` };
  }
  if (field.kind === "number" || field.kind === "integer") {
    const n = Number(text);
    if (!Number.isFinite(n)) return { problem: `${field.label} must be a number, not "${text}"` };
    if (field.kind === "integer" && !Number.isInteger(n))
      return { problem: `${field.label} must be a whole number, not ${text}` };
    return { value: n };
  }
  return { value: text };
}

/** The answer the form's values make, or the problems of each field by name. */
export function answerOf(
  form: AnswerForm,
  values: FieldValues,
  json: string,
): { ok: true; answer: unknown } | { ok: false; problems: Record<string, string> } {
  if (form.mode === "json") {
    try {
      return { ok: true, answer: JSON.parse(json) };
    } catch (e) {
      return {
        ok: false,
        problems: { json: `the answer is not valid JSON: ${(e as Error).message}` },
      };
    }
  }
  const fields = form.mode === "value" ? [form.field] : form.fields;
  const problems: Record<string, string> = {};
  const answer: Record<string, unknown> = {};
  for (const field of fields) {
    const { value, problem } = fieldValue(field, values[field.name]);
    if (problem) problems[field.name] = problem;
    else if (value !== undefined) answer[field.name] = value;
  }
  if (Object.keys(problems).length > 0) return { ok: false, problems };
  return { ok: true, answer: form.mode === "value" ? (answer[VALUE_FIELD] ?? null) : answer };
}

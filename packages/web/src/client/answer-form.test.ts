import { describe, expect, it } from "vitest";
import { answerForm, answerOf, initialValues } from "./answer-form";

describe("answerForm", () => {
  it("makes one field for a simple schema, a string without one", () => {
    expect(answerForm(null)).toMatchObject({ mode: "value", field: { kind: "string" } });
    expect(answerForm({ type: "boolean" })).toMatchObject({ field: { kind: "boolean" } });
    expect(answerForm({ type: "integer" })).toMatchObject({ field: { kind: "integer" } });
    expect(answerForm({ enum: ["red", 2, null] })).toMatchObject({
      field: { kind: "enum", options: ["red", 2, null] },
    });
  });

  it("makes one field per property of an object, marking the required ones", () => {
    const form = answerForm({
      type: "object",
      properties: {
        approve: { type: "boolean" },
        amount: { type: "number", title: "Amount (EUR)" },
        reason: { type: "string", description: "Why" },
      },
      required: ["amount"],
    });
    expect(form.mode).toBe("object");
    if (form.mode !== "object") return;
    expect(form.fields.map((f) => [f.name, f.kind, f.label, f.required])).toEqual([
      ["approve", "boolean", "approve", false],
      ["amount", "number", "Amount (EUR)", true],
      ["reason", "string", "reason", false],
    ]);
  });

  it("falls back to JSON for what a field cannot hold", () => {
    expect(answerForm({ type: "array", items: { type: "string" } }).mode).toBe("json");
    expect(
      answerForm({ type: "object", properties: { inner: { type: "object", properties: {} } } })
        .mode,
    ).toBe("json");
    expect(answerForm({ oneOf: [{ type: "string" }, { type: "number" }] }).mode).toBe("json");
    expect(answerForm({ type: "object" }).mode).toBe("json");
  });
});

describe("answerOf", () => {
  const order = answerForm({
    type: "object",
    properties: {
      size: { enum: ["S", "M"] },
      count: { type: "integer" },
      gift: { type: "boolean" },
      note: { type: "string" },
    },
    required: ["size", "count"],
  });

  it("builds the answer from the fields, leaving out empty optional ones", () => {
    expect(initialValues(order)).toEqual({ size: "", count: "", gift: false, note: "" });
    expect(answerOf(order, { size: "1", count: "3", gift: true, note: "" }, "")).toEqual({
      ok: true,
      answer: { size: "M", count: 3, gift: true },
    });
    expect(answerOf(answerForm({ type: "boolean" }), { answer: false }, "")).toEqual({
      ok: true,
      answer: false,
    });
  });

  it("says what is wrong with each field", () => {
    const result = answerOf(order, { size: "", count: "2.5", gift: false, note: "" }, "");
    expect(result).toEqual({
      ok: false,
      problems: { size: "size is required", count: "count must be a whole number, not 2.5" },
    });
    expect(answerOf(answerForm({ type: "number" }), { answer: "ten" }, "")).toMatchObject({
      ok: false,
      problems: { answer: 'Answer must be a number, not "ten"' },
    });
  });

  it("parses the JSON of a complex answer, or says where it breaks", () => {
    const list = answerForm({ type: "array" });
    expect(answerOf(list, {}, '["a", 1]')).toEqual({ ok: true, answer: ["a", 1] });
    const broken = answerOf(list, {}, "[1,");
    expect(broken.ok).toBe(false);
    expect(JSON.stringify(broken)).toContain("not valid JSON");
  });
});

import { describe, expect, it } from "vitest";
import { parseQueueMessage } from "./queue-message";

describe("parseQueueMessage", () => {
  it("reads a step message's trace, and refuses one that is no W3C traceparent", () => {
    const base = {
      v: 1,
      kind: "step",
      tenant_id: "acme",
      task_id: "t1",
      branch: "main",
      head: null,
    };
    const trace = "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01";
    expect(parseQueueMessage(JSON.stringify({ ...base, trace }))).toMatchObject({
      ok: true,
      message: { trace },
    });
    for (const bad of ["00-xyz-01", `${trace}-extra`, 7]) {
      expect(parseQueueMessage(JSON.stringify({ ...base, trace: bad })).ok).toBe(false);
    }
  });

  it("reads a step message written before messages had a kind as a step", () => {
    const old = '{"v":1,"tenant_id":"acme","task_id":"t1","branch":"main","head":null}';
    expect(parseQueueMessage(old)).toEqual({
      ok: true,
      message: { v: 1, kind: "step", tenant_id: "acme", task_id: "t1", branch: "main", head: null },
    });
  });

  it("reads a member message sent by an earlier release (a step with `member`) as a member of the group after its head", () => {
    const old =
      '{"v":1,"kind":"step","tenant_id":"a","task_id":"t","branch":"main","head":"c","member":2}';
    expect(parseQueueMessage(old)).toEqual({
      ok: true,
      message: {
        v: 1,
        kind: "member",
        tenant_id: "a",
        task_id: "t",
        branch: "main",
        base: "c",
        member: 2,
      },
    });
    // Such a body had a base always: one without is refused as a member message.
    const headless =
      '{"v":1,"kind":"step","tenant_id":"a","task_id":"t","branch":"main","head":null,"member":2}';
    expect(parseQueueMessage(headless)).toMatchObject({ ok: false, kind: "member" });
  });

  it.each([
    {
      kind: "step",
      body: {
        v: 1,
        kind: "step",
        tenant_id: "a",
        task_id: "t",
        branch: "main",
        head: "c",
      },
    },
    {
      kind: "member",
      body: {
        v: 1,
        kind: "member",
        tenant_id: "a",
        task_id: "t",
        branch: "main",
        base: "c",
        member: 1,
      },
    },
    {
      kind: "webhook",
      body: { v: 1, kind: "webhook", tenant_id: "a", task_id: "t", webhook_id: "w" },
    },
    {
      kind: "ingest",
      body: {
        v: 1,
        kind: "ingest",
        op: "ingest",
        tenant_id: "a",
        knowledge_base: "docs",
        document_id: "d1",
        version: 2,
      },
    },
  ])("reads a $kind message by its kind", ({ kind, body }) => {
    const parsed = parseQueueMessage(JSON.stringify(body));
    expect(parsed).toEqual({ ok: true, message: body });
    expect(parsed.ok && parsed.message.kind).toBe(kind);
  });

  it.each([
    { what: "a body that is not JSON", body: "not json", kind: "step", says: /not JSON/ },
    { what: "JSON null", body: "null", kind: "step", says: /object/ },
    { what: "a newer version", body: '{"v":2,"task_id":"x"}', kind: "step", says: /.+/ },
    {
      what: "an unknown kind",
      body: '{"v":1,"kind":"teleport","tenant_id":"a","task_id":"t","branch":"b","head":null}',
      kind: "step",
      says: /step/,
    },
    {
      what: "a webhook without its id",
      body: '{"v":1,"kind":"webhook","tenant_id":"a","task_id":"t"}',
      kind: "webhook",
      says: /.+/,
    },
    {
      what: "an ingest of an unknown op",
      body: '{"v":1,"kind":"ingest","op":"burn","tenant_id":"a","knowledge_base":"k"}',
      kind: "ingest",
      says: /.+/,
    },
    {
      what: "a step message with a field no version writes",
      body: '{"v":1,"kind":"step","tenant_id":"a","task_id":"t","branch":"b","head":null,"x":1}',
      kind: "step",
      says: /x/,
    },
  ])("answers why it cannot read $what, with the kind it claimed", ({ body, kind, says }) => {
    const parsed = parseQueueMessage(body);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.kind).toBe(kind);
    expect(parsed.issues.length).toBeGreaterThan(0);
    expect(JSON.stringify(parsed.issues)).toMatch(says);
  });

  it.each([
    { what: "JSON nested 200,000 deep", body: `${"[".repeat(200_000)}${"]".repeat(200_000)}` },
    {
      what: "a __proto__ key",
      body: '{"__proto__":{"polluted":1},"v":1,"kind":"step","tenant_id":"a","task_id":"t","branch":"b","head":null}',
    },
    {
      what: "a kind that is an object",
      body: '{"v":1,"kind":{"toString":1},"tenant_id":"a","task_id":"t","branch":"b","head":null}',
    },
    { what: "an array", body: "[1,2]" },
    {
      what: "an id over 128 characters",
      body: `{"v":1,"tenant_id":"a","task_id":"${"t".repeat(129)}","branch":"b","head":null}`,
    },
  ])("refuses $what without throwing or polluting objects", ({ body }) => {
    const parsed = parseQueueMessage(body);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.kind).toBe("step");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

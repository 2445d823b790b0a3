/**
 * The DLQ consumer and a dead-lettered ingest: the knowledge function crashed or
 * timed out on every delivery, so no attempt recorded the failure; the document
 * must not stay `ingesting` for good. A document finished, replaced or deleted
 * meanwhile is left as it is; so is a branch whose head moved past a dead-lettered step.
 */
import { KnowledgeStore, TaskStore } from "@stackvm/core";
import { MemoryItemStore } from "@stackvm/core/testing";
import type { SQSEvent } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { createDlqHandler } from "./dlq-handler";

const log = { debug() {}, info() {}, warn() {}, error() {} };
const key = (id: string) => ({ pk: "T#acme#KB#docs", sk: `D#${id}` });

function event(document: string, version: number): SQSEvent {
  const body = {
    v: 1,
    kind: "ingest",
    op: "ingest",
    tenant_id: "acme",
    knowledge_base: "docs",
    document_id: document,
    version,
  };
  return {
    Records: [
      {
        messageId: `m-${document}`,
        body: JSON.stringify(body),
        attributes: { ApproximateReceiveCount: "5" },
      },
    ],
  } as unknown as SQSEvent;
}

describe("a dead-lettered ingest", () => {
  it("fails its document while it is that version and unfinished, and nothing else", async () => {
    const items = new MemoryItemStore();
    const doc = (id: string, version: number, status: string) =>
      items.put({ ...key(id), tenant_id: "acme", version, status, error: null });
    await doc("stuck", 2, "ingesting");
    await doc("done", 1, "ready");
    await doc("newer", 3, "pending");
    const handle = createDlqHandler({
      store: new TaskStore(items),
      log,
      clock: { now: () => Date.parse("2026-11-27T06:00:00Z") },
      knowledge: new KnowledgeStore(items),
    });
    for (const [id, version] of [
      ["stuck", 2],
      ["done", 1],
      ["newer", 2],
      ["gone", 1],
    ] as const) {
      expect(await handle(event(id, version))).toEqual({ batchItemFailures: [] });
    }
    expect(await items.get(key("stuck"))).toMatchObject({
      status: "failed",
      error: { code: "ingest_dead_lettered" },
    });
    expect(await items.get(key("done"))).toMatchObject({ status: "ready", error: null });
    expect(await items.get(key("newer"))).toMatchObject({ status: "pending", error: null });
    expect(await items.get(key("gone"))).toBeNull();
    // Delivered twice, the second leaves the recorded failure as it is.
    await handle(event("stuck", 2));
    expect(await items.get(key("stuck"))).toMatchObject({ status: "failed" });
  });
});

describe("a dead-lettered step", () => {
  it("leaves a branch whose head moved meanwhile as it is, and fails one still at the message's head", async () => {
    const items = new MemoryItemStore();
    const branch = (name: string, head: string) =>
      items.put({
        pk: "T#acme#K#t1",
        sk: `B#${name}`,
        tenant_id: "acme",
        task_id: "t1",
        name,
        head,
        status: "running",
        plan: [],
      });
    await branch("moved", "abcdefgh-3");
    await branch("stuck", "abcdefgh-2");
    const ended: string[] = [];
    const handle = createDlqHandler({
      store: new TaskStore(items),
      log,
      clock: { now: () => Date.parse("2026-11-27T06:00:00Z") },
      onTerminal: async (b) => void ended.push(b.name),
    });
    for (const name of ["moved", "stuck"]) {
      const body = {
        v: 1,
        kind: "step",
        tenant_id: "acme",
        task_id: "t1",
        branch: name,
        head: "abcdefgh-2",
      };
      await handle({
        Records: [
          {
            messageId: name,
            body: JSON.stringify(body),
            attributes: { ApproximateReceiveCount: "5" },
          },
        ],
      } as unknown as SQSEvent);
    }
    expect(await items.get({ pk: "T#acme#K#t1", sk: "B#moved" })).toMatchObject({
      status: "running",
    });
    expect(await items.get({ pk: "T#acme#K#t1", sk: "B#stuck" })).toMatchObject({
      status: "failed",
    });
    expect(ended).toEqual(["stuck"]);
  });
});

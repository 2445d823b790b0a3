/**
 * A graceful stop drains the requests in flight before it closes (issue 13,
 * finding 11): a stop cut them, and POSTs that had created their task lost
 * the answer.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTestStack } from "../support/stack";

describe("a graceful stop", () => {
  let dataDir: string;
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("answers every request that created a task before it closes", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "stackvm-drain-"));
    const first = await startTestStack({ dataDir });
    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "ok" } }];
    let answered = 0;
    let stopping: Promise<void> | undefined;
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, async (_, n) => {
        try {
          const res = await fetch(`${first.url}/v1/tasks`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${first.apiKey}`,
              "content-type": "application/json",
            },
            body: JSON.stringify({ plan, metadata: { n } }),
          });
          await res.json();
          // Stop while the others are in flight.
          if (++answered === 3) stopping = first.stop();
          return { n, status: res.status };
        } catch {
          return { n, status: 0 };
        }
      }),
    );
    await stopping;
    expect(answered).toBeGreaterThanOrEqual(3);

    const second = await startTestStack({ dataDir });
    try {
      const listed = await second.api("GET", "/v1/tasks?limit=100");
      const created = (listed.body.tasks as Array<{ metadata: { n: number } }>).map(
        (t) => t.metadata.n,
      );
      const lost = created.filter((n) => outcomes[n]!.status !== 202);
      expect(lost).toEqual([]);
    } finally {
      await second.stop();
    }
  }, 120_000);
});

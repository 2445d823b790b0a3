import { describe, expect, it } from "vitest";
import {
  costOf,
  defaultCounts,
  defaultKnowledgeCounts,
  knowledgeCostOf,
  parseCounts,
  prices,
} from "../../scripts/cost-model";

const total = (lines: { cost: number }[]) => lines.reduce((sum, l) => sum + l.cost, 0);

describe("costOf", () => {
  it("prices one step's requests at the list prices", () => {
    const lines = costOf(defaultCounts, 1_000_000);
    const byItem = Object.fromEntries(lines.map((l) => [l.item, l]));
    expect(byItem["Lambda requests"]?.cost).toBeCloseTo(0.2, 6);
    expect(byItem["SQS FIFO requests"]?.cost).toBeCloseTo(3 * 0.5, 6);
    expect(byItem["DynamoDB reads"]?.cost).toBeCloseTo(0.125, 6);
    expect(byItem["DynamoDB writes"]?.quantity).toBe(2_000_000);
  });

  it("charges each write its item size rounded up to whole KB", () => {
    const counts = structuredClone(defaultCounts);
    counts.dynamodb = { reads_per_step: 1, writes_per_step: 2, bytes_written_per_step: 5000 };
    const writes = costOf(counts, 1).find((l) => l.item === "DynamoDB writes");
    expect(writes?.quantity).toBe(2 * 3);
  });

  it("prices the head move by the whole branch item and a read by its 4 KB units", () => {
    const counts = structuredClone(defaultCounts);
    counts.dynamodb = {
      reads_per_step: 1,
      writes_per_step: 2,
      bytes_written_per_step: 3000,
      branch_item_bytes: 9000,
      commit_item_bytes: 1500,
    };
    const lines = costOf(counts, 1);
    // The commit: 2 KB; the update: the branch's 9 KB, however little it changed.
    expect(lines.find((l) => l.item === "DynamoDB writes")?.quantity).toBe(2 + 9);
    expect(lines.find((l) => l.item === "DynamoDB reads")?.quantity).toBe(3);
  });

  it("prices the head move by the measured mean units over a task when the bench gives them", () => {
    const counts = structuredClone(defaultCounts);
    counts.dynamodb = {
      reads_per_step: 1,
      writes_per_step: 2,
      bytes_written_per_step: 900,
      branch_item_bytes: 2600,
      commit_item_bytes: 450,
      head_move_write_units: 2.4,
      branch_read_units: 1,
    };
    const lines = costOf(counts, 10);
    // The commit: 1 KB; each head move 2.4 units on average, not the end size's 3.
    expect(lines.find((l) => l.item === "DynamoDB writes")?.quantity).toBeCloseTo(10 * 3.4, 9);
    expect(lines.find((l) => l.item === "DynamoDB reads")?.quantity).toBe(10);
    // A step leaves its commit stored (and DynamoDB's 100 bytes per item), not the bytes sent.
    expect(lines.find((l) => l.item === "DynamoDB storage, one month")?.quantity).toBeCloseTo(
      (10 * 550) / 1024 ** 3,
      12,
    );
  });

  it("bills the worker's duration in GB-seconds on arm64", () => {
    const counts = structuredClone(defaultCounts);
    counts.lambda = { worker_ms_per_step: 1000, memory_mb: 2048 };
    const duration = costOf(counts, 1_000).find((l) => l.item === "Lambda duration (arm64)");
    expect(duration?.quantity).toBe(2_000);
    expect(duration?.cost).toBeCloseTo(2_000 * prices.lambdaArmGbSecond, 9);
  });

  it("grows linearly with the number of steps", () => {
    expect(total(costOf(defaultCounts, 2_000_000))).toBeCloseTo(
      2 * total(costOf(defaultCounts, 1_000_000)),
      9,
    );
  });
});

describe("parseCounts", () => {
  it("takes the bench's numbers and defaults the rest", () => {
    const { counts, defaulted } = parseCounts({ dynamodb: { reads_per_step: 3 } });
    expect(counts.dynamodb.reads_per_step).toBe(3);
    expect(counts.sqs.requests_per_step).toBe(defaultCounts.sqs.requests_per_step);
    expect(defaulted).toContain("sqs.requests_per_step");
    expect(defaulted).not.toContain("dynamodb.reads_per_step");
  });

  it.each([
    [
      { dynamodb: { writes_per_step: -1 } },
      "dynamodb.writes_per_step must be a number of 0 or more",
    ],
    [{ lambda: { memory_mb: "1024" } }, "lambda.memory_mb must be a number of 0 or more"],
    [[1, 2], "bench.json must be an object"],
  ])("refuses %j with a message naming the field", (json, message) => {
    expect(() => parseCounts(json)).toThrow(message);
  });
});

describe("knowledgeCostOf", () => {
  it("prices the index and originals by the GB-month and searches by their GETs and worker time", () => {
    const lines = knowledgeCostOf({
      ...defaultKnowledgeCounts,
      chunks: 100_000,
      queries: 1_000_000,
    });
    const byItem = Object.fromEntries(lines.map((l) => [l.item, l]));
    // 100,000 chunks of 1536 float32 (+1/16 for the index) and 2 KB of text: about 0.79 GB.
    expect(byItem["S3 storage: index (vectors, text, IVF-PQ)"]?.quantity).toBeCloseTo(0.794, 2);
    expect(byItem["S3 GET, searches"]?.cost).toBeCloseTo(30 * 0.4, 6);
    expect(byItem["Lambda duration of searches (arm64)"]?.quantity).toBeCloseTo(60_000, 6);
  });

  it("costs nothing for searches when nobody searches", () => {
    const lines = knowledgeCostOf({ ...defaultKnowledgeCounts, queries: 0 });
    expect(lines.filter((l) => l.item.includes("searches")).every((l) => l.cost === 0)).toBe(true);
  });
});

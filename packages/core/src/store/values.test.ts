import { describe, expect, it } from "vitest";
import { CreateTaskInput } from "../service/task-input";
import { MemoryBlobs } from "../testing/memory/memory-blobs";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { decodeValue, encodeValue, loadValue, spillValue } from "./values";

/** Values a user may send or a tool may answer that look like the store's own forms. */
const lookalikes: unknown[] = [
  { $blob: "abc", size: 3 },
  { $blob: "0".repeat(64), size: 10 },
  { $value: 1 },
  { $value: { $blob: "abc", size: 3 } },
];

describe("value slots", () => {
  it.each(lookalikes)("keep %j as the user's value, never as a reference", async (value) => {
    const blobs = new MemoryBlobs();
    const stored = await spillValue(value, blobs, "t/a/b");
    expect(decodeValue(stored)).toEqual(value);
    expect(await loadValue(stored, blobs, "t/a/b")).toEqual(value);
  });

  it("leaves other values as they are, so that stored data reads the same", () => {
    for (const value of [null, 1, "x", [1], { a: 1 }, { $blob: "x" }, { $value: 1, b: 2 }]) {
      expect(encodeValue(value)).toEqual(value);
      expect(decodeValue(value)).toEqual(value);
    }
  });

  it("still reads a real reference from the blob store", async () => {
    const blobs = new MemoryBlobs();
    const big = "x".repeat(70_000);
    const stored = await spillValue(big, blobs, "t/a/b");
    expect(stored).toMatchObject({ size: 70_002 });
    expect(await loadValue(stored, blobs, "t/a/b")).toBe(big);
  });
});

describe("a task whose values look like references", () => {
  const forged = { $blob: "abc", size: 3 };

  it("answers a plan's final answer shaped as a reference as it was given", async () => {
    const sys = memorySystem();
    const plan = [
      { seq_no: 0, type: "assign", parameters: { x: forged } },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
    ];
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await sys.drain();
    const got = await sys.tasks.get("acme", task.task_id);
    expect(got).toMatchObject({ status: "completed", final_answer: forged });
    expect((await sys.tasks.list("acme", { limit: 10 })).tasks[0]?.final_answer).toEqual(forged);
    const branch = await sys.branches.get("acme", task.task_id, "main");
    expect(branch.state.variables.x).toEqual(forged);
  });

  it("passes inputs shaped as references through to the answer", async () => {
    const sys = memorySystem();
    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "${a}" } }];
    const inputs = { a: forged, b: { $value: 2 } };
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan, inputs }));
    await sys.drain();
    expect(await sys.tasks.get("acme", task.task_id)).toMatchObject({
      status: "completed",
      final_answer: forged,
    });
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    expect(commits.at(-1)?.outputs).toEqual(inputs);
  });

  it("keeps a tool's answer shaped as a reference as the tool gave it", async () => {
    const llm = new FakeLlm(() => JSON.stringify(forged));
    const sys = memorySystem({ llm });
    const plan = [
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "llm_generate",
          tool_params: { prompt: "a reference", response_format: "JSON object" },
          output_vars: "final_answer",
        },
      },
    ];
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await sys.drain();
    expect(await sys.tasks.get("acme", task.task_id)).toMatchObject({
      status: "completed",
      final_answer: forged,
    });
  });
});

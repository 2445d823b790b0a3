import { describe, expect, it } from "vitest";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { taskLifecycle } from "./lifecycle";
import { CreateTaskInput } from "./task-input";

describe("a task's end", () => {
  it("does not undo a retry that made another branch the task's result before the end landed", async () => {
    const sys = memorySystem({ llm: new FakeLlm(() => "unused") });
    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }];
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await sys.drain();
    const ended = await sys.store.getBranch("acme", task.task_id, "main");
    // A retry promotes its branch (the API showed the task ended, from its branch)
    // between the end's read of the task and its write.
    const store = Object.create(sys.store) as typeof sys.store;
    store.getTask = async (tenant, taskId) => {
      const read = await sys.store.getTask(tenant, taskId);
      await sys.store.updateTask(tenant, taskId, { branch: "retry-1", status: "running" });
      return read;
    };
    await taskLifecycle(store, sys.clock).onTerminal(ended!);
    expect(await sys.store.getTask("acme", task.task_id)).toMatchObject({
      branch: "retry-1",
      status: "running",
    });
  });
});

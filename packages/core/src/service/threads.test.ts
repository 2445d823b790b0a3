// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/**
 * Threads over the in-memory system: a continue that crashed after its turn's
 * task started, before the thread's items were written, is finished by the
 * same continue sent again with its Idempotency-Key (no second turn); and a
 * long thread keeps a bounded history.
 */
import { describe, expect, it } from "vitest";
import { integrateSystem } from "../testing/integrate-system";
import { CreateTaskInput } from "./task-input";
import { ContinueTaskInput } from "./thread-input";

const doubled = JSON.stringify({
  reasoning: "double n",
  plan: [
    { seq_no: 0, type: "assign", parameters: { n: "${n} * 2" } },
    { seq_no: 1, type: "assign", parameters: { final_answer: "${n}" } },
  ],
});

function system() {
  const sys = integrateSystem();
  sys.llm.answer = () => doubled;
  return sys;
}

async function firstTurn(sys: ReturnType<typeof system>) {
  const { task } = await sys.tasks.create(
    "acme",
    CreateTaskInput.parse({
      plan: [
        { seq_no: 0, type: "assign", parameters: { n: 21 } },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${n}" } },
      ],
    }),
  );
  await sys.drain();
  return task.task_id;
}

describe("a continue", () => {
  it("cut short between its task and its thread is finished by the same continue again", async () => {
    const sys = system();
    const first = await firstTurn(sys);
    const threads = sys.stores.threads;
    const putTurn = threads.putTurn.bind(threads);
    threads.putTurn = async () => {
      throw new Error("the process died here");
    };
    const body = ContinueTaskInput.parse({ goal: "Double it." });
    await expect(sys.threads.continue("acme", first, body, "turn-2")).rejects.toThrow(/died/);
    threads.putTurn = putTurn;
    await expect(sys.threads.get("acme", first)).rejects.toMatchObject({ kind: "not_found" });

    const again = await sys.threads.continue("acme", first, body, "turn-2");
    expect(again.replayed).toBe(true);
    await sys.drain();
    const thread = await sys.threads.get("acme", first);
    expect(thread.turns.map((t) => [t.turn, t.task_id])).toEqual([
      [1, first],
      [2, again.task.task_id],
    ]);
    expect((await sys.tasks.get("acme", again.task.task_id)).final_answer).toBe(42);
    const listed = await sys.tasks.list("acme", { limit: 100, cursor: null });
    expect(listed.tasks).toHaveLength(2);
  });

  it("keeps at most 20 earlier turns in a long thread's history, counting the rest", async () => {
    const sys = system();
    let task = await firstTurn(sys);
    for (let i = 0; i < 23; i++) {
      const next = await sys.threads.continue(
        "acme",
        task,
        ContinueTaskInput.parse({ goal: `Double it, time ${i + 1}.` }),
        null,
      );
      await sys.drain();
      task = next.task.task_id;
    }
    const branch = await sys.store.getBranch("acme", task, "main");
    expect(branch?.config.thread?.turns).toHaveLength(20);
    expect(branch?.config.thread?.omitted).toBe(3);
    // The history ends with the turn this one continues (turn 23); turn 24 is this one.
    expect(branch?.config.thread?.turns.at(-1)?.goal).toBe("Double it, time 22.");
    expect((await sys.tasks.get("acme", task)).final_answer).toBe(21 * 2 ** 23);
    const prompt = sys.llm.requests.at(-1)!.messages.at(-1)!.content;
    expect(prompt).toMatch(/\(\d+ earlier turns? left out\)|Turn 4:/);
    expect(prompt).toContain("Turn 23: Double it, time 22.");
    expect(prompt).toContain("The task's goal: Double it, time 23.");
  });
});

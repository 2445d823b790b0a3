import { describe, expect, it } from "vitest";
import type { ThreadHistory } from "../store/records";
import { planMessages } from "./prompts";
import { THREAD_PROMPT_CHARS, threadText } from "./thread-prompt";

const turn = (n: number, answer: unknown = `answer ${n}`) => ({
  task_id: `tsk_${n}`,
  branch: "main",
  goal: `goal ${n}`,
  answer,
});

describe("threadText", () => {
  it("answers nothing for a task that is not a turn of a thread", () => {
    expect(threadText(undefined)).toBe("");
    expect(threadText({ thread_id: "tsk_1", turns: [], omitted: 0 })).toBe("");
  });

  it("shows each earlier turn's goal and answer, oldest first, JSON answers as JSON", () => {
    const text = threadText({
      thread_id: "tsk_1",
      turns: [turn(1), turn(2, { city: "Kyoto" })],
      omitted: 0,
    });
    expect(text).toContain(
      'Turn 1: goal 1\nAnswer: answer 1\nTurn 2: goal 2\nAnswer: {"city":"Kyoto"}',
    );
    expect(text).toContain("reference them as ${name}");
    expect(text).not.toContain("left out");
  });

  it("keeps a long conversation within its bound, leaving out the oldest turns and saying so", () => {
    const long: ThreadHistory = {
      thread_id: "tsk_1",
      turns: Array.from({ length: 20 }, (_, i) => turn(i + 6, "x".repeat(5_000))),
      omitted: 5,
    };
    const text = threadText(long);
    expect(text.length).toBeLessThan(THREAD_PROMPT_CHARS + 400);
    // The newest turn is whole up to its cap; the numbering counts the turns left out before.
    expect(text).toContain("Turn 25: goal 25\nAnswer: ");
    expect(text).toContain("… (5000 chars)");
    expect(text).not.toContain("Turn 6:");
    const left = Number(/\((\d+) earlier turns left out\)/.exec(text)?.[1]);
    const shown = (text.match(/^Turn \d+:/gm) ?? []).length;
    expect(left + shown).toBe(25);
  });

  it("is what the planner's prompt starts with, before the goal", () => {
    const [, user] = planMessages({
      goal: "Summarise.",
      responseFormat: {},
      tools: [],
      inputs: { city: "Kyoto" },
      today: "2026-12-02",
      thread: { thread_id: "tsk_1", turns: [turn(1, "I pick Kyoto")], omitted: 0 },
    });
    expect(user!.content).toMatch(
      /^This goal continues a conversation[\s\S]*Answer: I pick Kyoto[\s\S]*The task's goal: Summarise\.[\s\S]*city \(Kyoto\)/,
    );
  });
});

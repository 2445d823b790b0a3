import { describe, expect, it } from "vitest";
import { StepError } from "../errors";
import { checkGroupMarks, findGroups, groupRunAt } from "../plan/groups";
import type { Plan } from "../plan/schema";
import { validatePlan } from "../plan/validate";
import { CreateTaskInput } from "../service/task-input";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { context } from "../testing/plan-fixtures";
import { runMember } from "./member";
import type { MemberMessage } from "./message";
import { parseQueueMessage } from "./queue-message";
import { runStep } from "./step";

const gen = (seq: number, out: string, prompt: string, extra: Record<string, unknown> = {}) => ({
  seq_no: seq,
  type: "calling" as const,
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: out },
  ...extra,
});

/** Four independent calls and a combining one. */
const fourPlusOne: Plan = [
  gen(0, "a", "about A"),
  gen(1, "b", "about B"),
  gen(2, "c", "about C"),
  gen(3, "d", "about D"),
  gen(4, "final_answer", "combine ${a} ${b} ${c} ${d}"),
];

async function start(sys: ReturnType<typeof memorySystem>, plan: unknown) {
  const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
  return task.task_id;
}

const echo = () =>
  new FakeLlm((request) => {
    const last = request.messages.at(-1)?.content ?? "";
    return `answer to ${String(last).slice(0, 40)}`;
  });

describe("findGroups", () => {
  it("groups consecutive independent callings, split by a read, a jump target and final_answer", () => {
    expect(findGroups(fourPlusOne)).toEqual([{ members: [0, 1, 2, 3], name: null }]);
    const plan: Plan = [
      gen(0, "a", "x"),
      gen(1, "b", "uses ${a}"),
      gen(2, "c", "y"),
      gen(3, "d", "z"),
      { seq_no: 4, type: "jmp", parameters: { target_seq: 6 } },
      gen(5, "e", "x"),
      gen(6, "f", "x"),
      { seq_no: 7, type: "assign", parameters: { final_answer: "${f}" } },
    ];
    expect(findGroups(plan).map((g) => g.members)).toEqual([[1, 2, 3]]);
    expect(groupRunAt(plan, 2, 4)).toEqual([2, 3]);
    expect(groupRunAt(plan, 3, 4)).toBeNull();
    expect(groupRunAt(fourPlusOne, 0, 2)).toEqual([0, 1]);
    expect(groupRunAt(fourPlusOne, 0, 1)).toBeNull();
  });

  it("keeps ask_human alone and follows explicit marks", () => {
    const plan: Plan = [
      gen(0, "a", "x", { group: "one" }),
      gen(1, "b", "x", { group: "one" }),
      gen(2, "c", "x", { group: "two" }),
      gen(3, "d", "x", { group: "two" }),
      gen(4, "e", "x", { group: "solo" }),
      {
        seq_no: 5,
        type: "calling",
        parameters: { tool_name: "ask_human", tool_params: { question: "ok?" }, output_vars: "ok" },
      },
      { seq_no: 6, type: "assign", parameters: { final_answer: "${ok}" } },
    ];
    expect(findGroups(plan)).toEqual([
      { members: [0, 1], name: "one" },
      { members: [2, 3], name: "two" },
    ]);
    expect(checkGroupMarks(plan)).toEqual([]);
  });

  it("refuses marks that cannot be groups, with where and why", () => {
    const bad = [
      gen(0, "a", "x", { group: "g" }),
      gen(1, "b", "${a}", { group: "g" }),
      gen(2, "c", "x"),
      gen(3, "d", "x", { group: "g" }),
      gen(4, "final_answer", "x", { group: "h" }),
    ];
    const result = validatePlan(bad, context);
    expect(result.ok).toBe(false);
    const codes = result.ok ? [] : result.problems.map((p) => [p.code, p.path]);
    expect(codes).toEqual([
      ["group_reads_member", "[1].group"],
      ["group_split", "[3].group"],
      ["group_not_parallel", "[4].group"],
    ]);
    const odd = validatePlan([gen(0, "final_answer", "x", { group: 7 })], context);
    expect(odd.ok ? [] : odd.problems.map((p) => p.code)).toEqual(["invalid_group"]);
  });
});

describe("parallel groups in the step protocol", () => {
  it("runs four members apart and commits five linear commits in plan order", async () => {
    const sys = memorySystem({ llm: echo() });
    const taskId = await start(sys, fourPlusOne);
    await sys.drain();
    const task = await sys.tasks.get("acme", taskId);
    expect(task.status).toBe("completed");
    const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
    const linear = commits.reverse();
    expect(linear.map((c) => [c.type, c.seq_no])).toEqual([
      ["plan", null],
      ["step", 0],
      ["step", 1],
      ["step", 2],
      ["step", 3],
      ["step", 4],
    ]);
    linear.forEach((c, i) => {
      expect(c.parent_id).toBe(i === 0 ? null : linear[i - 1]!.commit_id);
    });
    expect(linear[1]!.outputs.a).toMatch(/answer to/);
    expect(linear[1]!.llm_calls).toHaveLength(1);
    expect(linear[3]!.details?.group).toMatchObject({ members: [0, 1, 2, 3] });
    expect(task.usage.steps).toBe(5);
    const members = sys.queue.sent.filter((s) => (s.body as MemberMessage).member !== undefined);
    expect(members.map((m) => (m.body as MemberMessage).member).sort()).toEqual([1, 2, 3]);
    const branch = await sys.store.getBranch("acme", taskId, "main");
    expect(branch!.group ?? null).toBeNull();
    expect(branch!.group_base ?? null).toBeNull();
  });

  it("commits each member once when every member message is delivered twice", async () => {
    const llm = echo();
    const sys = memorySystem({ llm });
    const taskId = await start(sys, fourPlusOne);
    const original = sys.step;
    const seenMembers = new Set<number>();
    await sys.queue.drain(async (message) => {
      const parsed = parseQueueMessage(message.body);
      if (!parsed.ok) throw new Error("unreadable message");
      const body = parsed.message;
      if (body.kind === "member") {
        await runMember(original, body);
        if (!seenMembers.has(body.member)) {
          seenMembers.add(body.member);
          await runMember(original, body);
        }
      } else if (body.kind === "step") {
        await runStep(original, body);
      }
    });
    const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
    expect(commits.map((c) => c.seq_no).reverse()).toEqual([null, 0, 1, 2, 3, 4]);
    // The second delivery found its result held: no second LLM call.
    expect(llm.requests).toHaveLength(5);
  });

  it("commits the members before a failing one, then takes the error path", async () => {
    const llm = new FakeLlm((request) => {
      const last = String(request.messages.at(-1)?.content ?? "");
      if (last.includes("FAIL")) throw new StepError("tool_failed", "member b failed");
      return last.includes("plan_update") ? "x" : `answer to ${last.slice(0, 20)}`;
    });
    const sys = memorySystem({ llm });
    const taskId = await start(sys, [
      gen(0, "a", "x"),
      gen(1, "b", "FAIL"),
      gen(2, "c", "y"),
      gen(3, "final_answer", "${a} ${c}"),
    ]);
    await sys.drain();
    const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
    const types = commits.reverse().map((c) => [c.type, c.seq_no]);
    expect(types.slice(0, 3)).toEqual([
      ["plan", null],
      ["step", 0],
      ["error", 1],
    ]);
    const error = commits[2]!;
    expect(error.error).toMatchObject({ message: expect.stringMatching(/member b failed/) });
    // Member c ran, but its result is never committed: after the error, the plan is updated.
    expect(types[3]?.[0]).not.toBe("step");
    const branch = await sys.store.getBranch("acme", taskId, "main");
    expect(branch!.group ?? null).toBeNull();
  });
});

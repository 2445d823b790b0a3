// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/**
 * StackVM compatibility mode end to end in the in-memory system: a namespace's
 * `plan_compat`, a task's override, and what each step leaves as text.
 */
import { describe, expect, it } from "vitest";
import { isErrorKind } from "../errors";
import { NamespaceInput } from "../service/namespace-input";
import { CreateTaskInput } from "../service/task-input";
import { FakeLlm, memorySystem } from "../testing/memory-system";

/** The plans of issue 24: a reference nothing sets, and one into llm_generate's text. */
const unset = [
  { seq_no: 0, type: "assign", parameters: { final_answer: "Notes: ${user_provided_content}" } },
];
const intoText = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "List the steps as a JSON object" },
      output_vars: ["steps"],
    },
  },
  {
    seq_no: 1,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Explain: ${steps.steps}", context: { raw: "${steps}" } },
      output_vars: ["final_answer"],
    },
  },
];

async function run(
  plan: unknown[],
  options: { namespace?: string; plan_compat?: "strict" | "stackvm" } = {},
) {
  const llm = new FakeLlm(() => '{"steps": ["a", "b"]}');
  const sys = memorySystem({ llm });
  await sys.namespaces.put(
    "acme",
    "stackvm",
    NamespaceInput.parse({ allowed_tools: ["llm_generate"], plan_compat: "stackvm" }),
  );
  const { task } = await sys.tasks.create(
    "acme",
    CreateTaskInput.parse({ plan, namespace: options.namespace ?? "stackvm", ...options }),
  );
  await sys.drain();
  return { sys, llm, task: await sys.tasks.get("acme", task.task_id) };
}

describe("StackVM compatibility mode at run time", () => {
  it("runs a reference nothing sets as its text, in a namespace set to stackvm", async () => {
    const { task } = await run(unset);
    expect(task.status).toBe("completed");
    expect(task.final_answer).toBe("Notes: ${user_provided_content}");
  });

  it("keeps a dotted reference into text and a nested reference as written", async () => {
    const { task, llm } = await run(intoText);
    expect(task.status).toBe("completed");
    const sent = JSON.stringify(llm.requests.at(-1)?.messages);
    expect(sent).toContain("Explain: ${steps.steps}");
    expect(sent).toContain("${steps}");
  });

  it("is strict by default, and a task can choose either mode over its namespace's", async () => {
    const refused = await run(unset, { namespace: "default" }).catch((e: unknown) => e);
    expect(isErrorKind(refused, "invalid")).toBe(true);
    const strictTask = await run(unset, { plan_compat: "strict" }).catch((e: unknown) => e);
    expect(isErrorKind(strictTask, "invalid")).toBe(true);
    const { task } = await run(unset, { namespace: "default", plan_compat: "stackvm" });
    expect(task.final_answer).toBe("Notes: ${user_provided_content}");
  });

  it("leaves nothing behind when a strict task is refused", async () => {
    const { sys } = await run(unset);
    const before = (await sys.tasks.list("acme", { limit: 100, cursor: null })).tasks.length;
    await expect(
      sys.tasks.create("acme", CreateTaskInput.parse({ plan: unset, namespace: "default" })),
    ).rejects.toThrow(/user_provided_content/);
    const after = (await sys.tasks.list("acme", { limit: 100, cursor: null })).tasks.length;
    expect(after).toBe(before);
  });

  it("checks a fork's plan in the task's own mode, as its steps run", async () => {
    const { sys, task } = await run(unset, { namespace: "default", plan_compat: "stackvm" });
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    const root = commits.at(-1)!.commit_id;
    const other = [{ seq_no: 0, type: "assign", parameters: { final_answer: "${elsewhere}" } }];
    const fork = await sys.branches.fork("acme", task.task_id, {
      from_commit: root,
      name: "again",
      plan: other,
    });
    await sys.drain();
    const again = await sys.branches.get("acme", task.task_id, fork.name);
    expect(again.final_answer).toBe("${elsewhere}");
    // The strict default task refuses the same fork.
    const strict = await run([{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }], {
      namespace: "default",
    });
    const first = (
      await strict.sys.branches.commits("acme", strict.task.task_id, "main", 10, null)
    ).commits.at(-1)!.commit_id;
    await expect(
      strict.sys.branches.fork("acme", strict.task.task_id, { from_commit: first, plan: other }),
    ).rejects.toThrow(/elsewhere/);
  });
});

describe("a strict task whose step fails at run time and whose plan update has no answer", () => {
  /** StackVM's production plan #299 in short: a dotted reference into llm_generate's text. */
  const plan = [
    {
      seq_no: 0,
      type: "calling",
      parameters: {
        tool_name: "llm_generate",
        tool_params: { prompt: "Give the steps as a JSON object with a key 'steps'" },
        output_vars: ["region_merge_steps"],
      },
    },
    { seq_no: 1, type: "assign", parameters: { final_answer: "Do: ${region_merge_steps.steps}" } },
  ];

  it("ends failed after drain with the step's error on record, nothing left running or queued", async () => {
    const llm = new FakeLlm((request) => {
      if (JSON.stringify(request.messages).includes("You update plans")) {
        throw new Error("no answer scripted for the planner");
      }
      return "First merge, then split.";
    });
    const sys = memorySystem({ llm, maxPlanUpdates: 3 });
    const { task } = await sys.tasks.create(
      "acme",
      CreateTaskInput.parse({ plan, plan_compat: "strict" }),
    );
    await sys.drain();
    const done = await sys.tasks.get("acme", task.task_id);
    expect(done.status).toBe("failed");
    expect(done.error).toContain("no answer scripted for the planner");
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    expect(JSON.stringify(commits.map((c) => c.error))).toContain('"code":"unknown_reference"');
    expect(sys.queue.pending()).toEqual([]);
  });
});

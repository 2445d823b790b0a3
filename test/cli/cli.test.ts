/**
 * The `stackvm` command as a process against the local stack: `run` with its live
 * output, the read commands with `--json`, namespaces, keys, and the exit codes
 * and messages of failures.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { ADMIN_KEY, useTestStack } from "../support/stack";
import { type CliRun, runCli } from "./run-cli";

/** Runs the CLI against the test stack; `onStdout` sees the output as it comes. */
const cli = (
  args: string[],
  env: Record<string, string | undefined> = {},
  onStdout?: (soFar: string) => void,
): Promise<CliRun> =>
  runCli(args, { STACKVM_URL: t.url, STACKVM_API_KEY: t.apiKey, ...env }, onStdout);

const PLAN = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "First: name a fruit." },
      output_vars: ["fruit"],
    },
  },
  {
    seq_no: 1,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Second: praise ${fruit}." },
      output_vars: ["praise"],
    },
  },
  { seq_no: 2, type: "assign", parameters: { final_answer: "${praise}" } },
];

const t = useTestStack();
beforeEach(() => {
  t.llm.on("plan", { reasoning: "two generations", plan: PLAN });
  t.llm.on("plan_update", { reasoning: "the same again", resume_at: 2, plan: PLAN });
  t.llm.on("text", (r) =>
    r.messages.at(-1)!.content.includes("First") ? "mango" : "Mango is great.",
  );
});

async function finishedTask(): Promise<string> {
  const created = await t.api("POST", "/v1/tasks", { goal: "Praise a fruit." });
  await t.waitForTask(created.body.task_id);
  return created.body.task_id;
}

describe("stackvm run", () => {
  it("shows each step live as it commits, then the final answer", async () => {
    // The second step waits until the CLI has printed the first: the output is live.
    let seenFirst: () => void = () => undefined;
    const firstPrinted = new Promise<void>((r) => {
      seenFirst = r;
    });
    t.llm.on("text", async (r) => {
      if (r.messages.at(-1)!.content.includes("First")) return "mango";
      await firstPrinted;
      return "Mango is great.";
    });
    const run = await cli(
      ["run", "--goal", "Praise a fruit.", "--response-format", '{"lang":"Japanese"}'],
      {},
      (soFar) => {
        if (/step\s+\[0\] calling llm_generate → fruit = "mango"/.test(soFar)) seenFirst();
      },
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^task tsk_/);
    expect(lines[1]).toMatch(/^plan\s+plan written: "two generations"\s+\d[\d,]* tok · \$0\.0000$/);
    expect(lines[2]).toMatch(/^step\s+\[0\] calling llm_generate → fruit = "mango"/);
    // Not a terminal: 80 columns; what the step did gives way, the totals stay.
    expect(lines[3]).toMatch(
      /^step\s+\[1\] calling llm_generate → praise = "Mango is… {2}[\d,]+ tok · \$0\.0000$/,
    );
    expect(lines.every((line) => line.length <= 80)).toBe(true);
    expect(lines[4]).toMatch(/^step\s+\[2\] assign → final_answer = "Mango is great\."/);
    expect(lines[5]).toMatch(/^✓ completed · 3 steps · [\d,]+ tokens · \$0\.0000 · [\d.]+ s$/);
    expect(lines.at(-1)).toBe("Mango is great.");
    const planner = t.llm.requests.find((r) => r.schemaName === "plan")!;
    expect(planner.messages.map((m) => m.content).join("\n")).toContain("Japanese");
  });

  it("prints the final answer as the model writes it, then the step's commit", async () => {
    const answer = "Mango is great, and ripe in June.";
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => {
      release = r;
    });
    // The model stops after its first pieces until the CLI has printed them.
    t.llm.streaming = {
      chunkChars: 5,
      chunkDelayMs: 1,
      beforeChunk: (index, _text, request) =>
        request.schemaName === "text" && index === 2 ? released : undefined,
    };
    t.llm.on("plan", {
      reasoning: "one step",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "llm_generate",
            tool_params: { prompt: "Praise a mango." },
            output_vars: ["final_answer"],
          },
        },
      ],
    });
    t.llm.on("text", answer);
    let heldAt = "";
    const run = await cli(["run", "--goal", "Praise a mango."], {}, (soFar) => {
      if (!heldAt && /answer {2}\[0\] Mango/.test(soFar)) {
        heldAt = soFar;
        release();
      }
    });
    expect(run.code).toBe(0);
    // While the model was held, the CLI showed the start of the answer and no commit of it.
    expect(heldAt).not.toMatch(/step\s+\[0\]/);
    const lines = run.stdout.trim().split("\n");
    const written = lines.findIndex((line) => line.startsWith("answer  [0] "));
    expect(lines[written]).toBe(`answer  [0] ${answer}`);
    expect(lines[written + 1]).toMatch(/^step\s+\[0\] calling llm_generate/);
    expect(lines.at(-1)).toBe(answer);
  });

  it("exits 7 with the failed task as JSON when the task fails", async () => {
    t.llm.on("plan", { reasoning: "bad", plan: [{ seq_no: 0, type: "assign", parameters: {} }] });
    const run = await cli(["run", "--goal", "Fail, please.", "--json"]);
    expect(run.code).toBe(7);
    const task = JSON.parse(run.stdout);
    expect(task).toMatchObject({ status: "failed", goal: "Fail, please." });
    expect(task.error).toMatch(/fails validation/);
  });

  it("refuses bad flags with exit 2 and says how to fix them", async () => {
    const [format, nothing, unknown] = await Promise.all([
      cli(["run", "--goal", "x", "--response-format", "lang=ja"]),
      cli(["run"]),
      cli(["frobnicate"]),
    ]);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain(
      `--response-format must be JSON, e.g. --response-format '{"lang":"Japanese"}'`,
    );
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("give --goal, or --plan FILE, or both");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });

  it("plans adaptively with --planning adaptive, and refuses a mode it does not know", async () => {
    // The first plan stops before final_answer; the planner is asked again once it has run.
    t.llm.on("plan", { reasoning: "the fruit first", plan: PLAN.slice(0, 1) });
    t.llm.on("plan_update", { reasoning: "now praise it", resume_at: 1, plan: PLAN });
    const run = await cli([
      "run",
      "--goal",
      "Praise a fruit, step by step.",
      "--planning",
      "adaptive",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const task = JSON.parse(run.stdout);
    expect(task).toMatchObject({
      status: "completed",
      final_answer: "Mango is great.",
      planning: "adaptive",
    });
    const mine = t.llm.requests.filter((r) =>
      r.messages.some((m) => m.content.includes("Praise a fruit, step by step.")),
    );
    expect(mine.map((r) => r.schemaName).filter((n) => n.startsWith("plan"))).toEqual([
      "plan",
      "plan_update",
    ]);
    expect(mine[0]!.messages[0]!.content).toContain("This task is planned adaptively");

    const bad = await cli(["run", "--goal", "x", "--planning", "reactive"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--planning is up_front or adaptive, not 'reactive'");
    const help = await cli(["run", "--help"]);
    expect(help.stdout).toMatch(/--planning <mode>\s+up_front \(whole plan first\) or adaptive/);
  });
});

describe("stackvm read commands", () => {
  it("lists tasks, shows the log, a diff and forks, with --json on each", async () => {
    const taskId = await finishedTask();
    const [tasks, log, logText, task] = await Promise.all([
      cli(["tasks", "--json", "--limit", "5"]),
      cli(["log", taskId, "--json"]),
      cli(["log", taskId]),
      cli(["task", taskId]),
    ]);
    expect(tasks.code).toBe(0);
    expect(JSON.parse(tasks.stdout).tasks.map((x: { task_id: string }) => x.task_id)).toContain(
      taskId,
    );
    const commits = JSON.parse(log.stdout).commits as Array<{ commit_id: string; type: string }>;
    expect(commits.map((c) => c.type)).toEqual(["step", "step", "step", "plan"]);
    expect(logText.stdout.trim().split("\n")).toHaveLength(4);
    expect(logText.stdout).toContain(commits[0]!.commit_id);
    expect(task.stdout).toContain("status   completed");
    expect(task.stdout.trim().endsWith("Mango is great.")).toBe(true);

    const [diff, diffText] = await Promise.all([
      cli(["diff", taskId, commits[0]!.commit_id, "--against", commits[3]!.commit_id, "--json"]),
      cli(["diff", taskId, commits[1]!.commit_id]),
    ]);
    expect(JSON.parse(diff.stdout).added).toEqual({
      fruit: "mango",
      praise: "Mango is great.",
      final_answer: "Mango is great.",
    });
    expect(diffText.stdout).toContain('+ praise = "Mango is great."');

    const fork = await cli([
      "fork",
      taskId,
      commits[2]!.commit_id,
      "--suggestion",
      "Praise it more.",
      "--json",
    ]);
    expect(fork.code).toBe(0);
    expect(JSON.parse(fork.stdout)).toMatchObject({
      forked_from: { branch: "main", commit_id: commits[2]!.commit_id },
    });
  });

  it("creates, shows, updates, lists and deletes namespaces", async () => {
    const create = await cli([
      "namespace",
      "create",
      "research",
      "--allowed-tools",
      "llm_generate",
      "--allowed-tools",
      "http_request",
      "--description",
      "Research tasks",
      "--plan-compat",
      "stackvm",
    ]);
    expect(create.code).toBe(0);
    expect(create.stdout).toContain("allowed tools  llm_generate, http_request");
    expect(create.stdout).toContain("plan compat    stackvm");
    const typo = await cli(["namespace", "update", "research", "--plan-compat", "lenient"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("--plan-compat is strict or stackvm");
    const again = await cli(["namespace", "create", "research", "--allowed-tools", "llm_generate"]);
    expect(again.code).toBe(6);
    expect(again.stderr).toContain("stackvm namespace update research");
    const update = await cli([
      "namespace",
      "update",
      "research",
      "--allowed-hosts",
      "api.example.com",
    ]);
    expect(update.code).toBe(0);
    const show = JSON.parse((await cli(["namespace", "show", "research", "--json"])).stdout);
    expect(show).toMatchObject({
      allowed_tools: ["llm_generate", "http_request"],
      allowed_hosts: ["api.example.com"],
      description: "Research tasks",
      plan_compat: "stackvm",
    });
    const list = JSON.parse((await cli(["namespace", "list", "--json"])).stdout);
    expect(list.namespaces.map((n: { name: string }) => n.name)).toContain("research");
    expect((await cli(["namespace", "delete", "research"])).code).toBe(0);
    const gone = await cli(["namespace", "show", "research"]);
    expect(gone.code).toBe(5);
  });

  it("updates one setting of a namespace and keeps every other, set through the API", async () => {
    const settings = {
      allowed_tools: ["llm_generate"],
      allowed_hosts: ["api.example.com"],
      description: "Kept",
      knowledge_bases: ["docs"],
      parallel_width: 2,
      sandbox_limits: { time_ms: 5000, memory_mib: 128 },
      plan_compat: "stackvm",
      planner_instructions: "Kept too.",
      planning: "adaptive",
    };
    expect((await t.api("PUT", "/v1/namespaces/kept", settings)).status).toBe(200);
    const update = await cli(["namespace", "update", "kept", "--description", "Changed"]);
    expect(update.code, update.stderr).toBe(0);
    const after = (await t.api("GET", "/v1/namespaces/kept")).body;
    expect(after).toMatchObject({ ...settings, description: "Changed" });
    await t.api("DELETE", "/v1/namespaces/kept");
  });

  it("sets, shows and clears a namespace's planner instructions", async () => {
    const create = await cli([
      "namespace",
      "create",
      "steered",
      "--allowed-tools",
      "llm_generate",
      "--planner-instructions",
      "Answer in French.",
    ]);
    expect(create.code, create.stderr).toBe(0);
    expect(create.stdout).toContain("instructions   Answer in French.");
    const tooLong = await cli([
      "namespace",
      "update",
      "steered",
      "--planner-instructions",
      "x".repeat(4_001),
    ]);
    expect(tooLong.code).not.toBe(0);
    expect(tooLong.stderr).toContain("planner_instructions must be at most 4,000 characters");
    expect((await t.api("GET", "/v1/namespaces/steered")).body.planner_instructions).toBe(
      "Answer in French.",
    );
    const cleared = await cli(["namespace", "update", "steered", "--planner-instructions", ""]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(
      (await t.api("GET", "/v1/namespaces/steered")).body.planner_instructions,
    ).toBeUndefined();
    await t.api("DELETE", "/v1/namespaces/steered");
  });

  it("sets a namespace's planning mode, shows it, and refuses one it does not know", async () => {
    const create = await cli([
      "namespace",
      "create",
      "stepwise",
      "--allowed-tools",
      "llm_generate",
      "--planning",
      "adaptive",
    ]);
    expect(create.code, create.stderr).toBe(0);
    expect(create.stdout).toContain("planning       adaptive");
    expect((await t.api("GET", "/v1/namespaces/stepwise")).body.planning).toBe("adaptive");
    const bad = await cli(["namespace", "update", "stepwise", "--planning", "react"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--planning is up_front or adaptive, not 'react'");
    expect((await t.api("GET", "/v1/namespaces/stepwise")).body.planning).toBe("adaptive");
    const back = await cli(["namespace", "update", "stepwise", "--planning", "up_front"]);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain("planning       up_front");
    expect((await t.api("GET", "/v1/namespaces/stepwise")).body.planning).toBeUndefined();
    await t.api("DELETE", "/v1/namespaces/stepwise");
  });

  it("creates a key for a tenant with the operator key, and only with it", async () => {
    const made = await cli(["keys", "create", "--tenant", "initech", "--json"], {
      STACKVM_ADMIN_KEY: ADMIN_KEY,
    });
    expect(made.code).toBe(0);
    const key = JSON.parse(made.stdout).key as string;
    const tasks = await cli(["tasks", "--json"], { STACKVM_API_KEY: key });
    expect(JSON.parse(tasks.stdout).tasks).toEqual([]);
    const refused = await cli(["keys", "create", "--tenant", "initech"]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain("set STACKVM_ADMIN_KEY");
  });
});

describe("stackvm configuration and failures", () => {
  it("reads the key that npm start keeps, and exits 3, 4 and 5 with what to do", async () => {
    const dir = await mkdtemp(join(tmpdir(), "stackvm-cli-"));
    try {
      await writeFile(join(dir, "api-key"), `${t.apiKey}\n`);
      const fromFile = await cli(["tasks", "--json"], {
        STACKVM_API_KEY: undefined,
        STACKVM_DATA_DIR: dir,
      });
      expect(fromFile.code).toBe(0);
      const [down, badKey, missing, noKey] = await Promise.all([
        cli(["tasks"], { STACKVM_URL: "http://127.0.0.1:9" }),
        cli(["tasks"], { STACKVM_API_KEY: "svm_local_not-a-real-key" }),
        cli(["task", "tsk_does_not_exist"]),
        cli(["tasks"], { STACKVM_API_KEY: undefined, STACKVM_DATA_DIR: join(dir, "nothing") }),
      ]);
      expect(down.code).toBe(3);
      expect(down.stderr).toContain("cannot reach StackVM at http://127.0.0.1:9");
      expect(down.stderr).toContain("npm start");
      expect(badKey.code).toBe(4);
      expect(badKey.stderr).toContain("check STACKVM_API_KEY");
      expect(missing.code).toBe(5);
      expect(missing.stderr).toContain("tsk_does_not_exist");
      expect(noKey.code).toBe(4);
      expect(noKey.stderr).toContain("no API key: set STACKVM_API_KEY");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("stackvm answer", () => {
  it("answers the question a waiting task asks, and refuses a task that does not wait", async () => {
    const created = await t.api("POST", "/v1/tasks", {
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "ask_human",
            tool_params: { question: "How many?", schema: { type: "integer" } },
            output_vars: "n",
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${n}" } },
      ],
    });
    const taskId = created.body.task_id as string;
    for (let i = 0; i < 600; i++) {
      const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/main`);
      if (body.status === "waiting") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const wrong = await cli(["answer", taskId, "--answer", '"many"']);
    expect(wrong.code).toBe(6);
    expect(wrong.stderr).toContain("integer");
    const ok = await cli(["answer", taskId, "--answer", "3"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("answered");
    const task = await t.waitForTask(taskId);
    expect(task.final_answer).toBe(3);
    const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits`);
    expect(body.commits.find((c: any) => c.seq_no === 0).details.answered_by).toBe("cli");
    const again = await cli(["answer", taskId, "--answer", "4"]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("not waiting");
  });
});

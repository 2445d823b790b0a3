/**
 * The `stackvm` command as a process against the local stack: branches, promote,
 * `fork --watch` following the fork alone, `doctor` and what it says to fix,
 * and the output's polish (width, plurals, errors and plan problems said once).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";
import { runCli } from "./run-cli";

// The doctor tests change the LLM between two checks: no cached answer between them.
// The doctor's sandbox check runs Python: the stack boots it at start, as npm start does.
const t = useTestStack({ doctorCacheMs: 0, warmPython: true });
const cli = (
  args: string[],
  env: Record<string, string | undefined> = {},
  onStdout?: (soFar: string) => void,
) => runCli(args, { STACKVM_URL: t.url, STACKVM_API_KEY: t.apiKey, ...env }, onStdout);

const generate = (seq: number, prompt: string, out: string) => ({
  seq_no: seq,
  type: "calling",
  parameters: {
    tool_name: "llm_generate",
    tool_params: { prompt },
    output_vars: [out],
  },
});

const PLAN = [
  generate(0, "First: name a fruit.", "fruit"),
  generate(1, "Second: praise ${fruit}.", "praise"),
  { seq_no: 2, type: "assign", parameters: { final_answer: "${praise}" } },
];

beforeEach(() => {
  t.llm.on("plan", { reasoning: "two generations", plan: PLAN });
  t.llm.on("text", (r) =>
    r.messages.at(-1)!.content.includes("First") ? "mango" : "Mango is great.",
  );
});

describe("stackvm branches, promote and fork --watch", () => {
  it("follows only the fork to its own answer, lists the branches, and promotes the fork", async () => {
    const created = await t.api("POST", "/v1/tasks", { goal: "Praise a fruit." });
    const taskId = created.body.task_id as string;
    await t.waitForTask(taskId);
    const log = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits`);
    const afterStep1 = log.body.commits.find((c: { seq_no: number }) => c.seq_no === 1);
    t.llm.on("plan_update", {
      reasoning: "say it forever",
      resume_at: 2,
      plan: [
        ...PLAN.slice(0, 2),
        { seq_no: 2, type: "assign", parameters: { final_answer: "${fruit} forever" } },
      ],
    });

    const fork = await cli(
      [
        "fork",
        taskId,
        afterStep1.commit_id,
        "--suggestion",
        "Say it forever.",
        "--name",
        "forever",
        "--watch",
      ],
      { COLUMNS: "120" },
    );
    expect(fork.stderr).toBe("");
    expect(fork.code).toBe(0);
    const lines = fork.stdout.trim().split("\n");
    expect(lines[0]).toMatch(
      new RegExp(`^branch forever forked from ${afterStep1.commit_id} \\((queued|running)\\)$`),
    );
    // Only the fork's own commits: main's history and answer are not printed again.
    const commitLines = lines.filter((l) => /^\(|^(plan|step|error)\s/.test(l));
    expect(commitLines).toHaveLength(2);
    expect(commitLines.every((l) => l.startsWith("(forever) "))).toBe(true);
    expect(commitLines[0]).toMatch(/plan_update {2}\[2\] plan updated, resuming at \[2\]/);
    expect(commitLines[1]).toMatch(/step\s+\[2\] assign → final_answer = "mango forever"/);
    expect(fork.stdout).not.toContain("Mango is great.");
    expect(lines).toContain(
      `the task's result is still branch main: make this one the result with \`stackvm promote ${taskId} forever\``,
    );
    expect(lines.at(-1)).toBe("mango forever");
    expect(lines.some((l) => /^✓ forever completed · 2 commits · /.test(l))).toBe(true);

    const branches = await cli(["branches", taskId]);
    expect(branches.code).toBe(0);
    const rows = branches.stdout.trimEnd().split("\n");
    expect(rows[0]).toMatch(/^\s+BRANCH\s+STATUS\s+HEAD\s+FORKED FROM$/);
    expect(rows.find((r) => r.includes(" main "))).toMatch(
      /^\*\s+main\s+completed\s+\S+ \[2\] step\s+-$/,
    );
    expect(rows.find((r) => r.includes(" forever "))).toMatch(
      new RegExp(
        `^\\s+forever\\s+completed\\s+\\S+ \\[2\\] step\\s+main at ${afterStep1.commit_id}$`,
      ),
    );

    const promoted = await cli(["promote", taskId, "forever"]);
    expect(promoted.code).toBe(0);
    expect(promoted.stdout).toContain(`branch forever is now the result of ${taskId} (completed)`);
    expect(promoted.stdout.trim().endsWith("mango forever")).toBe(true);
    const after = JSON.parse((await cli(["branches", taskId, "--json"])).stdout);
    expect(after.result).toBe("forever");
    expect((await t.api("GET", `/v1/tasks/${taskId}`)).body.final_answer).toBe("mango forever");

    const missing = await cli(["promote", taskId, "nope"]);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain("nope");
    // Six processes in a row: on a loaded machine each takes seconds to start.
  }, 180_000);
});

describe("stackvm doctor", () => {
  it("checks the API, the key, each model, the embeddings and the sandbox", async () => {
    const run = await cli(["doctor"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines.slice(0, 5).map((l) => l.split(/\s+/).slice(0, 2).join(" "))).toEqual([
      "✓ api",
      "✓ key",
      "✓ llm",
      "✓ embeddings",
      "✓ sandbox",
    ]);
    expect(lines[2]).toMatch(
      /^✓ llm\s+model scripted-model \(default, reason, eval\) answered at http/,
    );
    // The sandbox's data engine, with the versions it has: the pinned ones.
    expect(lines[5]).toMatch(/^✓ data libraries\s+python 3\.11\.2, numpy 1\.24\.2, pandas 1\.5\.3/);
    expect(lines.at(-1)).toBe("everything a task needs is there");
  });

  it("says what to fix and exits non-zero when the LLM refuses the key", async () => {
    t.llm.queue("text", { fault: "status", status: 401, message: "bad key" });
    t.llm.queue("embeddings", { fault: "status", status: 404, message: "no such model" });
    const run = await cli(["doctor", "--json"]);
    expect(run.code).toBe(3);
    const body = JSON.parse(run.stdout);
    expect(body.ok).toBe(false);
    const byName = Object.fromEntries(body.checks.map((c: { name: string }) => [c.name, c]));
    expect(byName.llm).toMatchObject({ status: "failed" });
    expect(byName.llm.fix).toContain("OPENAI_API_KEY");
    expect(byName.embeddings).toMatchObject({ status: "warning" });
    expect(byName.embeddings.fix).toContain("EMBEDDING_MODEL");
    expect(byName.sandbox.status).toBe("ok");
  });

  it("fails the API check when nothing answers, and the key check for a wrong key", async () => {
    const [down, badKey] = await Promise.all([
      cli(["doctor"], { STACKVM_URL: "http://127.0.0.1:9" }),
      cli(["doctor"], { STACKVM_API_KEY: "svm_local_not-a-real-key" }),
    ]);
    expect(down.code).toBe(3);
    expect(down.stdout).toMatch(/^✗ api\s+cannot reach StackVM at http:\/\/127\.0\.0\.1:9/);
    expect(down.stdout).toContain("fix: start the local stack with `npm start`");
    expect(badKey.code).toBe(4);
    expect(badKey.stdout).toMatch(/✗ key\s+GET \/v1\/doctor/);
    expect(badKey.stdout).toContain("fix: set STACKVM_API_KEY");
  });

  it("answers the route only with a key", async () => {
    const res = await t.api("GET", "/v1/doctor", undefined, { key: null });
    expect(res.status).toBe(401);
  });
});

describe("stackvm output", () => {
  it("says each plan problem once, and an error commit's word once", async () => {
    const dir = await mkdtemp(join(tmpdir(), "stackvm-cli-"));
    try {
      const file = join(dir, "plan.json");
      await writeFile(
        file,
        JSON.stringify([
          { seq_no: 0, type: "assign", parameters: {} },
          { seq_no: 1, type: "jmp", parameters: { target_seq: 9 } },
          { seq_no: 2, type: "calling", parameters: { tool_name: "no_such_tool" } },
        ]),
      );
      const bad = await cli(["run", "--plan", file]);
      expect(bad.code).toBe(6);
      const problems = bad.stderr.split("\n").filter((l) => l.startsWith("  - "));
      expect(problems.length).toBeGreaterThanOrEqual(3);
      expect(bad.stderr).toMatch(
        new RegExp(`the plan has ${problems.length} problems \\[invalid_plan\\]`),
      );
      for (const problem of problems) {
        const where = problem.slice(4).split(":")[0]!;
        expect(bad.stderr.split(`${where}:`).length - 1, where).toBe(1);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    t.llm.on("plan", { reasoning: "bad", plan: [{ seq_no: 0, type: "assign", parameters: {} }] });
    const failed = await cli(["run", "--goal", "Fail, please."]);
    expect(failed.code).toBe(7);
    const errorLine = failed.stdout.split("\n").find((l) => l.startsWith("error"))!;
    expect(errorLine.match(/error/g)).toHaveLength(1);
    expect(failed.stdout).toMatch(/✗ failed · 0 steps · /);
  });

  it("says 1 step, not 1 steps", async () => {
    const created = await t.api("POST", "/v1/tasks", {
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }],
    });
    const taskId = created.body.task_id as string;
    const watched = await cli(["watch", taskId]);
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/✓ completed · 1 step · 0 tokens · /);
    const shown = await cli(["task", taskId]);
    expect(shown.stdout).toMatch(/usage {4}1 step · 0 LLM calls · 0 tokens · /);
  });

  it("fits every line to COLUMNS when not a terminal", async () => {
    t.llm.on("text", (r) =>
      r.messages.at(-1)!.content.includes("First") ? "京都".repeat(40) : "Mango is great.",
    );
    const run = await cli(["run", "--goal", "Praise a fruit."], { COLUMNS: "50" });
    expect(run.code).toBe(0);
    const step = run.stdout.split("\n").find((l) => l.includes("[0] calling"))!;
    expect(step).toMatch(/… {2}[\d,]+ tok · \$0\.0000$/);
    // Wide characters take two columns each.
    const width = [...step].reduce((n, ch) => n + (/[\u3000-\u9fff]/.test(ch) ? 2 : 1), 0);
    expect(width).toBeLessThanOrEqual(50);
  });
});

describe("stackvm --help", () => {
  it("keeps a gap between each flag and its description", async () => {
    const help = await cli(["namespace", "create", "--help"]);
    expect(help.code).toBe(0);
    const options = help.stdout
      .split("Options:\n")[1]!
      .split("\n")
      .filter((l) => l.startsWith("  -"));
    expect(options.length).toBeGreaterThanOrEqual(5);
    const column = options[0]!.search(/ {2,}\S/);
    for (const line of options) {
      expect(line, line).toMatch(/^ {2}-\S.* {2,}\S/);
      expect(line.search(/ {2,}\S/) + line.match(/ {2,}/)![0].length).toBe(
        column + options[0]!.match(/ {2,}/)![0].length,
      );
    }
  });
});

/** Polls a branch until it has `status`. */
async function branchIs(taskId: string, name: string, status: string): Promise<any> {
  let last: unknown;
  for (let i = 0; i < 600; i++) {
    const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/${name}`);
    if (body.status === status) return body;
    last = body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`branch ${name} of ${taskId} never became ${status}: ${JSON.stringify(last)}`);
}

describe("stackvm answer with waits", () => {
  it("answers the fork that asks when the result branch does not, and says a timer asks nothing", async () => {
    const created = await t.api("POST", "/v1/tasks", {
      plan: [
        { seq_no: 0, type: "assign", parameters: { base: 10 } },
        {
          seq_no: 1,
          type: "calling",
          parameters: {
            tool_name: "ask_human",
            tool_params: { question: "How many?", schema: { type: "integer" } },
            output_vars: "n",
          },
        },
        { seq_no: 2, type: "assign", parameters: { final_answer: "${n}" } },
      ],
    });
    const taskId = created.body.task_id as string;
    await branchIs(taskId, "main", "waiting");
    const shown = await cli(["task", taskId]);
    expect(shown.stdout).toContain(
      `waiting for an answer: How many? (answer with \`stackvm answer ${taskId}\`)`,
    );
    expect((await cli(["answer", taskId, "--answer", "1"])).code).toBe(0);
    await t.waitForTask(taskId);
    const log = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits`);
    const first = log.body.commits.find((c: { seq_no: number }) => c.seq_no === 0);
    await t.api("POST", `/v1/tasks/${taskId}/branches`, {
      from_commit: first.commit_id,
      name: "again",
    });
    await branchIs(taskId, "again", "waiting");

    const answered = await cli(["answer", taskId, "--answer", "5"]);
    expect(answered.stderr).toBe("");
    expect(answered.stdout).toContain("answered: branch again is");
    expect((await branchIs(taskId, "again", "completed")).final_answer).toBe(5);
    expect((await t.api("GET", `/v1/tasks/${taskId}`)).body.final_answer).toBe(1);

    // A month from now: a wait is bounded to a year.
    const until = `${new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 19)}Z`;
    const timer = await t.api("POST", "/v1/tasks", {
      plan: [
        { seq_no: 0, type: "wait", parameters: { until } },
        { seq_no: 1, type: "assign", parameters: { final_answer: "late" } },
      ],
    });
    await branchIs(timer.body.task_id, "main", "waiting");
    const nothing = await cli(["answer", timer.body.task_id, "--answer", "1"]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain(`asks nothing: it waits until ${until.slice(0, 19)}`);
    await t.api("POST", `/v1/tasks/${timer.body.task_id}/cancel`);
  });
});

describe("stackvm watch of a waiting task", () => {
  it("says what the task waits for and how to answer, then goes on to the answer", async () => {
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
    let answered = false;
    const watched = await cli(["watch", taskId], {}, (soFar) => {
      if (answered || !soFar.includes("waiting for an answer")) return;
      answered = true;
      void t.api("POST", `/v1/tasks/${taskId}/branches/main/input`, { answer: 7 });
    });
    expect(watched.code).toBe(0);
    expect(watched.stdout).toContain(
      `waiting for an answer: How many? (answer with \`stackvm answer ${taskId}\`)`,
    );
    expect(watched.stdout.trim().endsWith("7")).toBe(true);
  });
});

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
/**
 * The web console in Debian's Chromium against the whole local stack with the
 * scripted LLM: sign-in, starting a task, watching it live, a commit and its
 * diff, forking, promoting, and a plan's errors at their instruction. Each test
 * leaves a screenshot in test/screenshots/ for a person to look at.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";
import { launchBrowser, requireChromium, type TestBrowser } from "./browser";

let stack: TestStack;
let browser: TestBrowser;
const pages: Page[] = [];

/**
 * Answers of the scripted LLM. A tool prompt with "slowly" waits until `release()`,
 * whether the call came before it or comes after it: on a loaded machine the test
 * may release before the step has reached the LLM, and a gate armed only by the
 * call then never opened (the task never completed).
 */
let released = false;
const waiting: Array<() => void> = [];
const gate = () =>
  released ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve));
const release = () => {
  released = true;
  for (const resolve of waiting.splice(0)) resolve();
};

const factsPlan = (topic: string) => [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: `Three facts about ${topic}` },
      output_vars: ["facts"],
    },
  },
  {
    seq_no: 1,
    type: "assign",
    parameters: { final_answer: "## Facts\n\n${facts}\n\n<script>window.__xss = 1</script>" },
  },
];

const bulletsPlan = [
  ...factsPlan("otters").slice(0, 1),
  {
    seq_no: 1,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Rewrite as bullets: ${facts}" },
      output_vars: ["bullets"],
    },
  },
  { seq_no: 2, type: "assign", parameters: { final_answer: "## Bullets\n\n${bullets}" } },
];

beforeAll(async () => {
  requireChromium();
  [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
  const { llm } = stack;
  llm.on("plan", (req) => {
    const text = req.messages.map((m) => m.content).join("\n");
    const topic = text.includes("slowly") ? "otters, slowly" : "otters";
    return { reasoning: "Ask for facts, then answer with them.", plan: factsPlan(topic) };
  });
  llm.on("plan_update", {
    reasoning: "The user asked for bullets.",
    plan: bulletsPlan,
    resume_at: 1,
  });
  llm.on("text", async (req) => {
    const prompt = req.messages.at(-1)?.content ?? "";
    if (prompt.includes("Rewrite as bullets")) return "- Otters hold hands\n- Otters use tools";
    if (prompt.includes("slowly")) await gate();
    return "Otters hold hands while they sleep. Otters use stones as tools.";
  });
});

afterEach(async () => {
  await Promise.all(pages.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  release();
  await browser?.close();
  await stack?.stop();
});

async function open(path: string, options: { signedIn?: boolean; width?: number } = {}) {
  const page = await browser.page({
    ...(options.signedIn === false ? {} : { key: stack.apiKey }),
    ...(options.width ? { width: options.width } : {}),
  });
  pages.push(page);
  await page.goto(`${stack.url}${path}`);
  return page;
}

/** A task run to completion over the API, as an integrator would. */
async function completedTask(goal: string): Promise<string> {
  const created = await stack.api("POST", "/v1/tasks", { goal });
  expect(created.status).toBe(202);
  const task = await stack.waitForTask(created.body.task_id);
  expect(task.status).toBe("completed");
  return task.task_id;
}

async function commitOfStep(taskId: string, seqNo: number): Promise<string> {
  const { body } = await stack.api("GET", `/v1/tasks/${taskId}/branches/main/commits`);
  const commit = body.commits.find(
    (c: { type: string; seq_no: number }) => c.type === "step" && c.seq_no === seqNo,
  );
  return commit.commit_id;
}

describe("the web console", () => {
  it("signs in with an API key, after a clear screen for a wrong one", async () => {
    const page = await open("/ui", { signedIn: false });
    await page.getByLabel("API key").fill("svm_local_not-a-real-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    const refused = page.getByRole("alert");
    await expect.poll(() => refused.locator("h1").textContent()).toBe("This API key was refused");
    expect(await refused.textContent()).toContain("401 Unauthorized");
    expect(await page.evaluate(() => sessionStorage.getItem("stackvm.apiKey"))).toBeNull();
    await browser.screenshot(page, "01-wrong-key");

    await page.getByRole("button", { name: "Try another key" }).click();
    await page.getByLabel("API key").fill(stack.apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Tasks" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("stackvm.apiKey"))).toBe(stack.apiKey);
    await browser.screenshot(page, "02-signed-in");
  });

  it("starts a task from the form and shows it complete live, without a reload", async () => {
    const page = await open("/ui/tasks/new");
    await page.getByLabel("Goal", { exact: true }).fill("Tell me about otters, slowly");
    await page.getByLabel("Answer language").fill("English");
    await page.getByRole("button", { name: "Start task" }).click();
    await page.waitForURL(/\/ui\/tasks\/tsk_/);
    await page.evaluate(() => {
      (window as unknown as { __sameDocument: boolean }).__sameDocument = true;
    });

    // The step waits on the scripted LLM: the page shows the run in progress.
    await page.locator(".commit-row", { hasText: "plan" }).waitFor();
    expect(await page.locator(".task-head .badge").first().textContent()).toMatch(/queued|running/);
    // Followed over the task's event stream (GET /v1/tasks/{id}/events), not by polling.
    await page.locator('.live[data-mode="stream"]').waitFor();
    await browser.screenshot(page, "03-task-running");

    release();
    await page.locator(".task-head .badge", { hasText: "completed" }).waitFor();
    await page.locator(".answer:not(.writing)").getByRole("heading", { name: "Facts" }).waitFor();
    expect(await page.locator(".commit-row").count()).toBe(3);
    expect(
      await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument),
    ).toBe(true);
    // The answer's raw HTML is shown as text, never run.
    expect(await page.locator(".answer script").count()).toBe(0);
    expect(await page.locator(".answer:not(.writing)").textContent()).toContain("<script>");
    expect(
      await page.evaluate(() => (window as unknown as { __xss?: number }).__xss),
    ).toBeUndefined();
    await browser.screenshot(page, "04-task-completed");
  });

  it("opens a commit with its inputs, LLM calls and state, and its diff", async () => {
    const taskId = await completedTask("Tell me about otters");
    const page = await open(`/ui/tasks/${taskId}`);
    await page.locator(".commit-row", { hasText: "#0 calling" }).click();
    const panel = page.locator(".commit-panel");
    await panel.getByRole("heading", { name: /#0 calling/ }).waitFor();
    expect(await panel.textContent()).toContain("Inputs, references resolved");
    expect(await panel.locator("table.llm-calls").textContent()).toContain("llm_generate");

    await panel.getByRole("tab", { name: "State" }).click();
    expect(await panel.locator(".instr.at-pc").getAttribute("data-seq")).toBe("1");

    await panel.getByRole("tab", { name: "Diff" }).click();
    const facts = panel.locator('.var-diff .sbs-row[data-var="facts"]');
    await facts.waitFor();
    expect(await facts.getAttribute("class")).toContain("added");
    expect(await panel.locator(".pc-move").textContent()).toContain("PC 0 → 1");

    // Any other commit can be the other side: Shift+click it in the graph.
    await page.locator(".commit-row", { hasText: "#1 assign" }).click({ modifiers: ["Shift"] });
    await panel.getByText("against the chosen commit").waitFor();
    await panel.locator('.var-diff .sbs-row[data-var="final_answer"]').waitFor();
    await browser.screenshot(page, "05-commit-diff");
  });

  it("opens an LLM call's prompt and answer beside it, with its JSON folded", async () => {
    const taskId = await completedTask("Tell me about otters");
    const page = await open(`/ui/tasks/${taskId}`);
    const panel = page.locator(".commit-panel");
    await page.locator(".commit-row", { hasText: "#0 calling" }).click();
    await panel.getByRole("heading", { name: /#0 calling/ }).waitFor();
    await panel.locator("table.llm-calls").getByRole("button", { name: "Open" }).click();
    const conversation = panel.locator(".llm-trace .llm-conversation");
    await conversation.waitFor();
    const user = conversation.locator(".llm-msg.role-user");
    expect(await user.textContent()).toContain("Three facts about otters");
    expect(await conversation.locator(".llm-msg.role-answer").textContent()).toContain(
      "Otters hold hands while they sleep.",
    );
    expect(await panel.locator(".llm-trace").textContent()).toContain("finish stop");

    // The planner's answer is JSON: folded until asked for.
    await page.locator(".commit-row:has(.type-tag.type-plan)").click();
    await panel.locator("#commit-title .type-plan").waitFor();
    await panel.locator("table.llm-calls").getByRole("button", { name: "Open" }).click();
    const answer = panel.locator(".llm-msg.role-answer details.llm-fold");
    await answer.waitFor();
    expect(await answer.getAttribute("open")).toBeNull();
    await answer.locator("summary").click();
    expect(await answer.getAttribute("open")).not.toBeNull();
    expect(await answer.locator(".j-key").first().textContent()).toBe('"reasoning"');
    await browser.screenshot(page, "05b-llm-trace");
  });

  it("forks from a commit with a suggestion and shows the new branch in the graph", async () => {
    const taskId = await completedTask("Tell me about otters");
    const page = await open(`/ui/tasks/${taskId}`);
    await page.locator(".commit-row", { hasText: "#0 calling" }).click();
    await page.getByRole("button", { name: "Fork from here…" }).click();
    await page.getByLabel("Suggestion for the planner").fill("Give the facts as bullets");
    await page.getByLabel("Branch name (optional)").fill("bullets");
    await page.getByRole("button", { name: "Fork", exact: true }).click();

    await page.getByRole("status").filter({ hasText: "Forked branch bullets" }).waitFor();
    const branch = page.locator('.branch-list li[data-branch="bullets"]');
    await branch.locator(".badge", { hasText: "completed" }).waitFor();
    await page.locator('.commit-row[data-branch="bullets"]', { hasText: "#2 assign" }).waitFor();
    expect(await page.locator(".graph-lines path.fork").count()).toBe(1);
    await browser.screenshot(page, "06-forked");

    // The original's chart: PC over time, one line per branch.
    await page.getByRole("button", { name: "PC over time" }).click();
    expect(await page.locator(".pc-chart path.pc-line").count()).toBe(2);
    await browser.screenshot(page, "06b-pc-chart");
  });

  it("promotes a branch to the task's result", async () => {
    const taskId = await completedTask("Tell me about otters");
    const fork = await stack.api("POST", `/v1/tasks/${taskId}/branches`, {
      from_commit: await commitOfStep(taskId, 0),
      name: "bullets",
      suggestion: "Give the facts as bullets",
    });
    expect(fork.status).toBe(202);
    const page = await open(`/ui/tasks/${taskId}`);
    const branch = page.locator('.branch-list li[data-branch="bullets"]');
    await branch.locator(".badge", { hasText: "completed" }).waitFor();
    await branch.getByRole("button", { name: "Promote" }).click();

    await page.getByRole("status").filter({ hasText: "Promoted bullets" }).waitFor();
    await branch.locator(".badge.result").waitFor();
    await page.locator(".answer:not(.writing)").getByRole("heading", { name: "Bullets" }).waitFor();
    expect(await page.locator('.task-head [data-fact="branch"]').textContent()).toBe("bullets");
    expect((await stack.api("GET", `/v1/tasks/${taskId}`)).body.branch).toBe("bullets");
    await browser.screenshot(page, "07-promoted");
  });

  it("starts its example plan with no example inputs, and names the plan task apart", async () => {
    const page = await open("/ui/tasks/new");
    await page.getByLabel("a plan (JSON, run as is)").check();
    expect(await page.locator("#inputs").inputValue()).toBe("");
    await page.getByRole("button", { name: "Start task" }).click();
    await page.waitForURL(/\/ui\/tasks\/tsk_/);
    const taskId = page.url().split("/").pop()!;
    const done = await stack.waitForTask(taskId);
    expect(done).toMatchObject({ status: "completed", final_answer: 42 });
    const [plan] = (
      await stack.api("GET", `/v1/tasks/${taskId}/branches/main/commits`)
    ).body.commits.slice(-1);
    expect(plan.outputs).toEqual({});
    await page.locator("#task-title", { hasText: `plan task ${taskId}` }).waitFor();
    // A task with no goal has no plan to save as a template (the API would answer 422 no_goal).
    await page.locator(".commit-panel").first().waitFor();
    expect(await page.getByRole("button", { name: "Save plan as template" }).count()).toBe(0);
  });

  it("shows a hostile name as text in the list and on the task's page: no markup runs, no override reverses it", async () => {
    const name = `<img src=x onerror="window.__xss=2">report\u202efdp.exe`;
    const created = await stack.api("POST", "/v1/tasks", {
      name,
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const taskId = created.body.task_id;
    await stack.waitForTask(taskId);
    const shown = '<img src=x onerror="window.__xss=2">report⟨U+202E⟩fdp.exe';
    for (const path of ["/ui", `/ui/tasks/${taskId}`]) {
      const page = await open(path);
      const where =
        path === "/ui" ? page.locator(`tr[data-task="${taskId}"]`) : page.locator("#task-title");
      await where.getByText(shown).waitFor();
      expect(await page.locator("img[src=x]").count()).toBe(0);
      expect(
        await page.evaluate(() => (window as unknown as { __xss?: number }).__xss),
      ).toBeUndefined();
    }
  });

  it("shows each problem of a rejected plan at its instruction", async () => {
    const page = await open("/ui/tasks/new");
    await page.getByLabel("a plan (JSON, run as is)").check();
    const editor = page.getByLabel("Plan", { exact: true });

    await editor.fill('[{"seq_no": 0,,}]');
    await page.getByRole("button", { name: "Start task" }).click();
    await page.locator(".plan-general", { hasText: "not valid JSON" }).waitFor();

    // A shape problem (no parameters), an unknown tool and a missing reference:
    // the console shows all three, as the API finds them, not only the first kind.
    const plan = [
      { seq_no: 0, type: "assign" },
      {
        seq_no: 1,
        type: "calling",
        parameters: { tool_name: "send_fax", tool_params: {}, output_vars: ["hits"] },
      },
      { seq_no: 2, type: "assign", parameters: { final_answer: "${missing}" } },
    ];
    const expected = (await stack.api("POST", "/v1/plans/validate", { plan, namespace: "default" }))
      .body.problems.length;
    expect(expected).toBeGreaterThanOrEqual(3);
    await editor.fill(JSON.stringify(plan, null, 2));
    for (const button of ["Check plan", "Start task"]) {
      await page.getByRole("button", { name: button }).click();
      const second = page.locator('.instr.has-problems[data-index="1"]');
      await second.waitFor();
      expect(await second.locator(".problem-message").textContent()).toContain("send_fax");
      expect(await second.locator(".problem-hint").textContent()).toContain("llm_generate");
      expect(
        await page.locator('.instr.has-problems[data-index="2"] .problem-message').textContent(),
      ).toContain("missing");
      expect(await page.locator('.instr.has-problems[data-index="0"]').count()).toBe(1);
      expect(await page.locator(".plan-problems h3").textContent()).toContain(
        `${expected} problems`,
      );
    }
    expect(page.url()).toMatch(/\/ui\/tasks\/new$/);
    await browser.screenshot(page, "08-plan-problems");

    // Forms the API accepts are not refused by the console: StackVM's tool-as-type
    // (checked, with its warning) and a wait, which then starts.
    await editor.fill(
      JSON.stringify([
        { seq_no: 0, type: "llm_generate", parameters: { prompt: "Hi", output_vars: ["hi"] } },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${hi}" } },
      ]),
    );
    await page.getByRole("button", { name: "Check plan" }).click();
    const verdict = page.locator(".plan-verdict");
    await verdict.waitFor();
    expect(await verdict.textContent()).toContain("The plan is valid");
    expect(await verdict.locator(".plan-warnings li").first().textContent()).toContain(
      "llm_generate",
    );
    await editor.fill(
      JSON.stringify([
        { seq_no: 0, type: "wait", parameters: { seconds: 1 } },
        { seq_no: 1, type: "assign", parameters: { final_answer: "waited" } },
      ]),
    );
    await page.getByRole("button", { name: "Start task" }).click();
    await page.waitForURL(/\/ui\/tasks\/tsk_/);
  });

  it("saves a commit's plan as a template, lists it, and edits a namespace", async () => {
    const taskId = await completedTask("Tell me about otters");
    const page = await open(`/ui/tasks/${taskId}`);
    await page.getByRole("button", { name: "Save plan as template" }).click();
    const saved = page.getByRole("status").filter({ hasText: "as template" });
    const templateId = (await saved.locator("code").textContent()) ?? "";
    expect(templateId).not.toBe("");

    await page.getByRole("link", { name: "Templates" }).click();
    await page.locator(`[data-template="${templateId}"]`).waitFor();
    await browser.screenshot(page, "10-templates");

    await page.getByRole("link", { name: "Namespaces" }).click();
    await page.getByLabel("Name", { exact: true }).fill("research");
    await page.getByLabel("Description").fill("Facts from the web");
    await page.getByRole("checkbox", { name: "llm_generate" }).check();
    await page.getByLabel(/Allowed hosts/).fill("api.example.com\n*.wikipedia.org");
    await page.getByRole("button", { name: "Save namespace" }).click();
    await page.getByRole("status").filter({ hasText: "Saved namespace research" }).waitFor();
    const row = page.locator('tr[data-namespace="research"]');
    await row.waitFor();
    expect(await row.textContent()).toContain("*.wikipedia.org");
    const { body } = await stack.api("GET", "/v1/namespaces/research");
    expect(body.allowed_tools).toEqual(["llm_generate"]);
    await browser.screenshot(page, "11-namespaces");

    // Settings the editor does not show, set through the API, survive an edit in it.
    const hidden = {
      knowledge_bases: ["docs"],
      parallel_width: 2,
      sandbox_limits: { time_ms: 5000 },
      plan_compat: "stackvm",
    };
    const put = await stack.api("PUT", "/v1/namespaces/research", {
      allowed_tools: body.allowed_tools,
      allowed_hosts: body.allowed_hosts,
      description: body.description,
      ...hidden,
    });
    expect(put.status).toBe(200);
    await row.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Description").fill("Facts, edited");
    await page.getByRole("button", { name: "Save namespace" }).click();
    await page.getByRole("status").filter({ hasText: "Saved namespace research" }).waitFor();
    const edited = (await stack.api("GET", "/v1/namespaces/research")).body;
    expect(edited).toMatchObject({ ...hidden, description: "Facts, edited" });
    expect(edited.planning).toBeUndefined();

    // The planning mode is the form's to set: adaptive, then shown in the list.
    await row.getByRole("button", { name: "Edit" }).click();
    expect(await page.getByLabel(/^Planning/).inputValue()).toBe("up_front");
    await page.getByLabel(/^Planning/).selectOption("adaptive");
    await page.getByRole("button", { name: "Save namespace" }).click();
    await page.getByRole("status").filter({ hasText: "Saved namespace research" }).waitFor();
    expect((await stack.api("GET", "/v1/namespaces/research")).body).toMatchObject({
      ...hidden,
      planning: "adaptive",
    });
    await row.locator('[data-planning="adaptive"]').waitFor();
    await browser.screenshot(page, "11b-namespace-adaptive");
  });

  it("starts a task planned as its namespace says or as the form chooses, and shows the mode on its page", async () => {
    const put = await stack.api("PUT", "/v1/namespaces/stepwise", {
      allowed_tools: ["llm_generate"],
      allowed_hosts: [],
      description: "planned a step at a time",
      planning: "adaptive",
    });
    expect(put.status).toBe(200);
    const start = async (goal: string, planning?: string) => {
      const page = await open("/ui/tasks/new");
      await page.getByLabel("Goal", { exact: true }).fill(goal);
      await page.getByLabel("Namespace").selectOption("stepwise");
      const mode = page.getByLabel("Planning");
      // The default option names the namespace's mode.
      await expect.poll(() => mode.locator("option").first().textContent()).toContain("adaptive");
      if (planning) await mode.selectOption(planning);
      await page.getByRole("button", { name: "Start task" }).click();
      await page.waitForURL(/\/ui\/tasks\/tsk_/);
      await page.locator(".task-head .badge", { hasText: "completed" }).waitFor();
      return page;
    };
    const planPrompt = (goal: string) =>
      stack.llm.requests.find(
        (r) => r.schemaName === "plan" && r.messages.some((m) => m.content.includes(goal)),
      )!.messages[0]!.content;

    const adaptive = await start("Tell me about otters, one step at a time");
    expect(await adaptive.locator('[data-fact="planning"]').textContent()).toBe("adaptive");
    expect(planPrompt("one step at a time")).toContain("This task is planned adaptively");
    await browser.screenshot(adaptive, "11c-task-adaptive");

    const upFront = await start("Tell me about otters, all planned first", "up_front");
    expect(await upFront.locator('[data-fact="planning"]').textContent()).toBe("up front");
    expect(planPrompt("all planned first")).not.toContain("planned adaptively");
    await stack.api("DELETE", "/v1/namespaces/stepwise");
  });

  it("creates a trigger with its secret shown once, and a schedule that it pauses", async () => {
    const page = await open("/ui/triggers");
    await page.getByLabel("Name", { exact: true }).fill("new-issue");
    await page.getByLabel("Goal").fill("Summarize the issue ${payload.title}");
    await page.getByRole("button", { name: "Create trigger" }).click();
    const created = page.getByRole("status").filter({ hasText: "Created trigger new-issue" });
    expect(await created.textContent()).toMatch(/whsec_/);
    await page.locator(".card[data-trigger]", { hasText: "new-issue" }).waitFor();
    await browser.screenshot(page, "12-triggers");

    await page.getByRole("link", { name: "Schedules" }).click();
    await page.getByLabel("Name", { exact: true }).fill("morning");
    await page.getByLabel("Goal").fill("Say good morning");
    await page.getByRole("button", { name: "Create schedule" }).click();
    await page.getByRole("status").filter({ hasText: "Created schedule morning" }).waitFor();
    const row = page.locator("tr[data-schedule]", { hasText: "morning" });
    await row.getByRole("button", { name: "Pause" }).click();
    await page.getByRole("status").filter({ hasText: "Paused schedule morning" }).waitFor();
    await row.locator(".badge", { hasText: "paused" }).waitFor();
    const { body } = await stack.api("GET", "/v1/schedules");
    expect(
      body.schedules.map((x: { name: string; enabled: boolean }) => [x.name, x.enabled]),
    ).toEqual([["morning", false]]);
    await browser.screenshot(page, "13-schedules");
  });

  it("stays readable on a phone", async () => {
    const taskId = await completedTask("Tell me about otters");
    const page = await open(`/ui/tasks/${taskId}?tab=diff`, { width: 390 });
    await page.locator(".var-diff").waitFor();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - window.innerWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await browser.screenshot(page, "09-phone");
  });
});

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
/**
 * The console's parts of issue 16 in Debian's Chromium against the whole local
 * stack with the scripted LLM: a waiting branch's question answered from the
 * form built from its schema (a wrong answer refused at the form, the branch
 * still waiting), and the members of a parallel group shown running at once.
 * Screenshots go to test/screenshots/.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";
import { launchBrowser, requireChromium, type TestBrowser } from "./browser";

let stack: TestStack;
let browser: TestBrowser;
const pages: Page[] = [];

/** Tool prompts wait here until `release()`: the group's members stay running meanwhile. */
let release: () => void = () => {};
let gate = new Promise<void>((resolve) => (release = resolve));

beforeAll(async () => {
  requireChromium();
  [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
  stack.llm.on("text", async (req) => {
    await gate;
    return `fact about ${req.messages.at(-1)?.content ?? ""}`;
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

async function open(path: string) {
  const page = await browser.page({ key: stack.apiKey });
  pages.push(page);
  await page.goto(`${stack.url}${path}`);
  return page;
}

async function start(plan: unknown[]): Promise<string> {
  const created = await stack.api("POST", "/v1/tasks", { plan });
  expect(created.status).toBe(202);
  return created.body.task_id;
}

describe("the console with waiting branches and parallel groups", () => {
  it("answers a question from the form built from its schema, refusing a wrong answer in place", async () => {
    const taskId = await start([
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "ask_human",
          tool_params: {
            question: "How many crates, and do we ship today?",
            schema: {
              type: "object",
              properties: {
                crates: { type: "integer", minimum: 1, maximum: 10 },
                today: { type: "boolean" },
                carrier: { enum: ["rail", "road"] },
              },
              required: ["crates", "carrier"],
            },
          },
          output_vars: "order",
        },
      },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${order}" } },
    ]);
    const page = await open(`/ui/tasks/${taskId}`);
    const question = page.locator('.question[data-branch="main"]');
    await question.getByText("How many crates, and do we ship today?").waitFor();

    // Checked in the page: a required field left empty.
    await question.getByRole("button", { name: "Send answer" }).click();
    await question
      .locator('[data-field="crates"] .field-problem', { hasText: "required" })
      .waitFor();

    // Checked by the server: 12 is over the schema's maximum. 422, shown at the form.
    await question.getByLabel(/crates/).fill("12");
    await question.getByLabel(/carrier/).selectOption({ label: "rail" });
    await question.getByRole("button", { name: "Send answer" }).click();
    const refused = question.getByRole("alert").filter({ hasText: "does not fit the question" });
    await refused.waitFor();
    expect(await refused.textContent()).toContain("HTTP 422");
    expect((await stack.api("GET", `/v1/tasks/${taskId}/branches/main`)).body.status).toBe(
      "waiting",
    );
    await browser.screenshot(page, "20-question-refused");

    await question.getByLabel(/crates/).fill("3");
    await question.getByLabel("today").check();
    await question.getByRole("button", { name: "Send answer" }).click();
    await page.locator(".task-head .badge", { hasText: "completed" }).waitFor();
    expect(await page.locator(".question").count()).toBe(0);
    const task = (await stack.api("GET", `/v1/tasks/${taskId}`)).body;
    expect(task.final_answer).toEqual({ crates: 3, today: true, carrier: "rail" });
    const commits = (await stack.api("GET", `/v1/tasks/${taskId}/branches/main/commits`)).body
      .commits as Array<{ seq_no: number; details?: { answered_by?: string } }>;
    expect(commits.find((c) => c.seq_no === 0)?.details?.answered_by).toBe("console");
    await browser.screenshot(page, "21-question-answered");
  });

  it("shows the members of a parallel group running at once, and the group gone once they are committed", async () => {
    const call = (seq_no: number, topic: string) => ({
      seq_no,
      type: "calling",
      parameters: {
        tool_name: "llm_generate",
        tool_params: { prompt: topic },
        output_vars: [topic],
      },
    });
    const taskId = await start([
      call(0, "otters"),
      call(1, "beavers"),
      call(2, "herons"),
      { seq_no: 3, type: "assign", parameters: { final_answer: "${otters} ${beavers} ${herons}" } },
    ]);
    const page = await open(`/ui/tasks/${taskId}`);
    const group = page.locator('.group-block[data-branch="main"]');
    // Every member waits on the scripted LLM: all three run at the same time.
    await expect
      .poll(() => group.locator('li[data-status="running"]').count(), { timeout: 20_000 })
      .toBe(3);
    expect(await group.locator("li").evaluateAll((li) => li.map((l) => l.dataset.seq))).toEqual([
      "0",
      "1",
      "2",
    ]);
    await browser.screenshot(page, "22-group-running");

    release();
    gate = Promise.resolve();
    await page.locator(".task-head .badge", { hasText: "completed" }).waitFor();
    await expect.poll(() => page.locator(".group-block").count()).toBe(0);
    const order = await page
      .locator('.commit-row[data-branch="main"]')
      .evaluateAll((rows) => rows.map((r) => r.textContent ?? ""));
    for (const seq of [0, 1, 2, 3]) {
      expect(order.some((text) => text.includes(`#${seq} `))).toBe(true);
    }
    await browser.screenshot(page, "23-group-committed");
  });
});

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
/**
 * A task's thread in the console, in Debian's Chromium against the local stack
 * with the scripted LLM: the page of a conversation's second turn lists both
 * turns, this one marked and the first a link to its task; a task nobody
 * continued shows no conversation.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";
import { launchBrowser, requireChromium, type TestBrowser } from "./browser";

let stack: TestStack;
let browser: TestBrowser;
const pages: Page[] = [];

beforeAll(async () => {
  requireChromium();
  [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
});
afterEach(async () => {
  await Promise.all(pages.splice(0).map((p) => p.close()));
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("the console's conversation card", () => {
  it("lists a thread's turns on a turn's page, linking the others", async () => {
    const first = await stack.api("POST", "/v1/tasks", {
      name: "Pick a city",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "Kyoto" } }],
    });
    await stack.waitForTask(first.body.task_id);
    stack.llm.on("plan", {
      reasoning: "repeat it",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "Still Kyoto" } }],
    });
    const second = await stack.api("POST", `/v1/tasks/${first.body.task_id}/continue`, {
      goal: "Are you sure?",
    });
    expect(second.status).toBe(202);
    await stack.waitForTask(second.body.task_id);

    const page = await browser.page({ key: stack.apiKey });
    pages.push(page);
    await page.goto(`${stack.url}/ui/tasks/${second.body.task_id}`);
    const card = page.locator("section.thread");
    await card.filter({ hasText: "Conversation: 2 turns" }).waitFor({ timeout: 15_000 });
    expect(await card.locator('li[data-current="true"]').textContent()).toContain("Are you sure?");
    const link = card.locator(`a[href="/ui/tasks/${first.body.task_id}"]`);
    expect(await link.count()).toBe(1);
    await browser.screenshot(page, "60-thread-turns");

    await link.click();
    await page.locator(".task-head code", { hasText: first.body.task_id }).waitFor();
    await card.filter({ hasText: "Conversation: 2 turns" }).waitFor();

    const alone = await stack.api("POST", "/v1/tasks", {
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "alone" } }],
    });
    await stack.waitForTask(alone.body.task_id);
    await page.goto(`${stack.url}/ui/tasks/${alone.body.task_id}`);
    await page.locator(".answer:not(.writing)", { hasText: "alone" }).waitFor();
    expect(await page.locator("section.thread").count()).toBe(0);
  });
});

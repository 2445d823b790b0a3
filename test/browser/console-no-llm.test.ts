/**
 * The console on a server with no LLM configured, in Debian's Chromium against
 * the local stack: the new-task form opens on a plan, says why, and its example
 * plan runs to its answer; the task list names the task by its title; a fork
 * opens on an edited plan, with no suggestion (which needs the planner) offered.
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
  [stack, browser] = await Promise.all([
    // No LLM: neither a base URL nor a key.
    startTestStack({ env: { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined } }),
    launchBrowser(),
  ]);
});

afterEach(async () => {
  await Promise.all(pages.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("the console with no LLM configured", () => {
  it("opens the new-task form on a plan, says why, and runs its example to the answer", async () => {
    const page = await browser.page({ key: stack.apiKey });
    pages.push(page);
    await page.goto(`${stack.url}/ui/tasks/new`);
    expect(await page.getByLabel("a plan (JSON, run as is)").isChecked()).toBe(true);
    expect(await page.locator("#no-llm-note").textContent()).toContain("no LLM configured");
    await browser.screenshot(page, "no-llm-new-task");
    await page.getByRole("button", { name: "Start task" }).click();
    await page.waitForURL(/\/ui\/tasks\/tsk_/);
    const taskId = page.url().split("/").pop()!;
    expect(await stack.waitForTask(taskId)).toMatchObject({
      status: "completed",
      final_answer: 42,
    });
    await page.goto(`${stack.url}/ui`);
    await page.getByText(`plan task ${taskId}`).waitFor();

    // A fork opens on an edited plan: a suggestion would need the planner.
    await page.goto(`${stack.url}/ui/tasks/${taskId}`);
    await page.locator(".commit-row", { hasText: "#0 assign" }).click();
    await page.getByRole("button", { name: "Fork from here…" }).click();
    expect(await page.getByLabel("With an edited plan").isChecked()).toBe(true);
    expect(await page.getByLabel(/With a suggestion/).isDisabled()).toBe(true);
  });
});

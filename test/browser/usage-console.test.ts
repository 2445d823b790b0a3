/**
 * The console's usage page in Debian's Chromium against the whole local stack:
 * this month's runs by namespace, with the total row, as `GET /v1/usage` answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";
import { launchBrowser, requireChromium, type TestBrowser } from "./browser";

let stack: TestStack;
let browser: TestBrowser;

beforeAll(async () => {
  requireChromium();
  [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("the console's usage page", () => {
  it("shows this month's runs by namespace and their total", async () => {
    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];
    for (let i = 0; i < 2; i++) {
      const created = await stack.api("POST", "/v1/tasks", { plan });
      await stack.waitForTask(created.body.task_id);
    }
    const page = await browser.page({ key: stack.apiKey });
    await page.goto(`${stack.url}/ui/usage`);
    const month = new Date().toISOString().slice(0, 7);
    const row = page.locator(`[data-month="${month}"] tr[data-namespace="default"]`);
    await row.waitFor();
    expect(await row.locator("td").allTextContents()).toEqual(["2", "2", "0", "0", "0", "$0.0000"]);
    const total = page.locator(`[data-month="${month}"] tbody tr`).last();
    expect(await total.locator("th").textContent()).toBe("Total");
    expect(await page.getByRole("link", { name: "Usage" }).getAttribute("aria-current")).toBe(
      "page",
    );
    await browser.screenshot(page, "usage");
    await page.close();
  });
});

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
/**
 * The console when things go wrong (issue 18, item 2), in Debian's Chromium
 * against the local stack with the scripted LLM: a step that failed shows its
 * error, attempt and next attempt while it waits; an LLM that cannot be reached
 * fails the task with that cause; "Retry" runs it again from its last commit;
 * a task queued for a running slot shows its place in line.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";
import { launchBrowser, requireChromium, type TestBrowser } from "./browser";

let stack: TestStack;
let browser: TestBrowser;
const pages: Page[] = [];

beforeAll(async () => {
  requireChromium();
  [stack, browser] = await Promise.all([
    startTestStack({
      env: { STACKVM_LLM_UNREACHABLE_SECONDS: "8", LLM_TIMEOUT_MS: "1500", LLM_MAX_ATTEMPTS: "1" },
    }),
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

describe("the console when a step fails", () => {
  it("shows the retry while it waits, the cause when it fails, and runs it again with Retry", async () => {
    // A server that died: the connection closes without an answer (a slow one is waited for).
    stack.llm.on("text", { fault: "close" });
    const created = await stack.api("POST", "/v1/tasks", {
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "llm_generate",
            tool_params: { prompt: "Name a river." },
            output_vars: ["river"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${river}" } },
      ],
    });
    expect(created.status).toBe(202);
    const taskId = created.body.task_id as string;
    const page = await browser.page({ key: stack.apiKey });
    pages.push(page);
    await page.goto(`${stack.url}/ui/tasks/${taskId}`);

    // Shown from the first failed attempt until the next one ends (about 5 s here).
    const retrying = page.locator('[data-why="retrying"]');
    await retrying
      .filter({ hasText: /attempt 1 of 5 failed.*llm_unreachable.*Next attempt at/s })
      .waitFor({ timeout: 15_000 });
    await browser.screenshot(page, "30-step-retrying");

    const failed = page.locator(".task-head .error-box", { hasText: "The task failed" });
    await failed.waitFor({ timeout: 30_000 });
    expect(await failed.textContent()).toContain("could not be reached");
    expect(await failed.textContent()).not.toMatch(/fork/i);
    expect(await retrying.count()).toBe(0);

    // The task list says why it failed, in its row.
    const list = await browser.page({ key: stack.apiKey });
    pages.push(list);
    await list.goto(`${stack.url}/ui`);
    await list
      .locator(`tr[data-task="${taskId}"] .task-error`, { hasText: "could not be reached" })
      .waitFor();

    stack.llm.reset();
    stack.llm.on("text", "Danube");
    await page.getByRole("button", { name: "Retry", exact: true }).click();
    await page.locator(".task-head .badge", { hasText: "completed" }).waitFor({ timeout: 20_000 });
    await page.locator(".answer:not(.writing)", { hasText: "Danube" }).waitFor();
    const task = (await stack.api("GET", `/v1/tasks/${taskId}`)).body;
    expect(task).toMatchObject({ status: "completed", final_answer: "Danube" });
    expect(task.branch).toMatch(/^retry-/);
    expect(await page.locator('[data-fact="branch"]').textContent()).toBe(task.branch);
    await browser.screenshot(page, "31-retried");
  });
});

describe("the console when a task waits for a running slot", () => {
  it("says so with its place in line instead of 'the planner is writing the plan'", async () => {
    const held: ServerResponse[] = [];
    const hold = createServer((_req, res) => held.push(res));
    await new Promise<void>((resolve) => hold.listen(0, "127.0.0.1", resolve));
    try {
      const made = await stack.api(
        "POST",
        "/v1/admin/tenants/narrow/keys",
        { name: "ci" },
        {
          key: ADMIN_KEY,
        },
      );
      const key = made.body.key as string;
      await stack.api(
        "PUT",
        "/v1/admin/tenants/narrow/quotas",
        { max_running_tasks: 1 },
        {
          key: ADMIN_KEY,
        },
      );
      const ns = { allowed_tools: ["http_request"], allowed_hosts: ["127.0.0.1"] };
      await stack.api("PUT", "/v1/namespaces/held", ns, { key });
      const url = `http://127.0.0.1:${(hold.address() as AddressInfo).port}/slow`;
      const body = {
        namespace: "held",
        plan: [
          {
            seq_no: 0,
            type: "calling",
            parameters: { tool_name: "http_request", tool_params: { url }, output_vars: ["r"] },
          },
          { seq_no: 1, type: "assign", parameters: { final_answer: "done" } },
        ],
      };
      const first = (await stack.api("POST", "/v1/tasks", body, { key })).body.task_id;
      const second = (await stack.api("POST", "/v1/tasks", body, { key })).body.task_id;
      const page = await browser.page({ key });
      pages.push(page);
      await page.goto(`${stack.url}/ui/tasks/${second}`);
      await page
        .locator('[data-why="slot"]', {
          hasText: "number 1 in line (this tenant runs at most 1 at once",
        })
        .waitFor();
      await page.getByText("No commit yet: the task waits for a running slot.").waitFor();
      for (const id of [second, first]) {
        await stack.api("POST", `/v1/tasks/${id}/cancel`, undefined, { key });
      }
    } finally {
      for (const res of held) res.end("{}");
      await new Promise<void>((resolve) => hold.close(() => resolve()));
    }
  });
});

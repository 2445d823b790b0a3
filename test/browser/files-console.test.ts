// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
/**
 * Files in the console, in Debian's Chromium against the whole local stack: a
 * file uploaded on the Files page (and refused with the API's reason when it
 * is empty), a document uploaded to a knowledge base, and the PNG a
 * `run_code` step wrote shown inline in its commit, read through the task's
 * blob route with the console's key. Each test leaves a screenshot in
 * test/screenshots/.
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalSandbox } from "@stackvm/local";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";
import { launchBrowser, requireChromium, type TestBrowser } from "./browser";

let stack: TestStack;
let browser: TestBrowser;
let sandbox: LocalSandbox;
const pages: Page[] = [];

beforeAll(async () => {
  requireChromium();
  sandbox = new LocalSandbox({ ceiling: { time_ms: 20_000 }, log: () => {} });
  [stack, browser] = await Promise.all([
    startTestStack({ sandbox, env: { EMBEDDING_MODEL: "scripted-embedding" } }),
    launchBrowser(),
  ]);
}, 120_000);

afterEach(async () => {
  await Promise.all(pages.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await sandbox?.close();
});

async function open(path: string): Promise<Page> {
  const page = await browser.page({ key: stack.apiKey });
  pages.push(page);
  await page.goto(`${stack.url}${path}`);
  return page;
}

function tempFile(name: string, content: string | Uint8Array): string {
  const path = join(mkdtempSync(join(tmpdir(), "stackvm-files-")), name);
  writeFileSync(path, content);
  return path;
}

/** A 120x80 PNG of colour gradients, written by the step with Python's zlib alone. */
const PNG_CODE = `import struct, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
W, H = 120, 80
rows = b"".join(b"\\x00" + bytes(v for x in range(W) for v in (x * 2, y * 3, 255 - x * 2)) for y in range(H))
png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
open("chart.png", "wb").write(png)
result = len(png)`;

describe("files in the console", () => {
  it("uploads a file for tasks on the Files page and shows its reference; refuses an empty one with the API's reason", async () => {
    const page = await open("/ui/files");
    await page.getByRole("heading", { name: "Files" }).waitFor();
    await page
      .locator("input[type=file]")
      .setInputFiles(tempFile("sales.csv", "region,total\nKansai,12\n"));
    await page.getByRole("button", { name: "Upload" }).click();
    const row = page.locator("tr", { hasText: "sales.csv" });
    await row.waitFor();
    const listed = (await stack.api("GET", "/v1/files")).body.files;
    const file = listed.find((f: any) => f.filename === "sales.csv");
    expect(await row.textContent()).toContain(`{"$file": "${file.file_id}"}`);
    expect(await row.textContent()).toContain("ready");

    await page.locator("input[type=file]").setInputFiles(tempFile("empty.csv", ""));
    await page.getByRole("button", { name: "Upload" }).click();
    await page.getByText("The upload was refused").waitFor();
    expect(await page.locator(".error-box").textContent()).toContain("is empty");
    await browser.screenshot(page, "40-files-upload");
  });

  it("uploads a document to a knowledge base from its card", async () => {
    expect((await stack.api("POST", "/v1/knowledge-bases", { name: "notes" })).status).toBe(201);
    const page = await open("/ui/knowledge");
    const kb = page.locator('[data-knowledge-base="notes"]');
    await kb.getByRole("heading", { name: "notes" }).waitFor();
    await kb.locator("input[type=file]").setInputFiles(tempFile("kyoto.md", "# Kyoto\n\nTemples."));
    await kb.getByRole("button", { name: "Upload" }).click();
    await kb.locator("tr", { hasText: "kyoto.md" }).waitFor();
    const docs = (await stack.api("GET", "/v1/knowledge-bases/notes/documents")).body.documents;
    expect(docs.map((d: any) => d.filename)).toEqual(["kyoto.md"]);
  });

  it("shows the PNG a step wrote inline in its commit", async () => {
    const created = await stack.api("POST", "/v1/tasks", {
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "run_code",
            tool_params: { language: "python", code: PNG_CODE, output: "all" },
            output_vars: ["chart"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${chart.files.0.sha256}" } },
      ],
    });
    expect(created.status).toBe(202);
    const task = await stack.waitForTask(created.body.task_id, { timeoutMs: 90_000 });
    expect(task.status, task.error).toBe("completed");

    const page = await open(`/ui/tasks/${created.body.task_id}`);
    await page.locator(".commit-row", { hasText: "#0 calling" }).click();
    const panel = page.locator(".commit-panel");
    const image = panel.locator('[data-output-file="chart.png"] img');
    await image.waitFor();
    // The image decoded: the browser read real PNG bytes through the blob route.
    await page.waitForFunction(
      () =>
        (document.querySelector(".output-image") as HTMLImageElement | null)?.naturalWidth === 120,
    );
    expect(await panel.locator('[data-output-file="chart.png"]').textContent()).toContain(
      "image/png",
    );
    expect(await image.getAttribute("src")).toMatch(/^blob:/);
    const path = await browser.screenshot(page, "41-step-png-inline");
    expect(existsSync(path)).toBe(true);
  });
});

/**
 * Debian's Chromium driven by playwright-core, for the console's browser tests:
 * headless, no sandbox (CI runs as root in a container), nothing that reaches
 * the internet on its own, and a fresh profile per run.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Fails a browser test's set-up, before any stack starts, where Chromium is not
 * installed, saying how to install it: a missing browser is a broken machine,
 * not a test to skip.
 */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM}: install it with scripts/setup-system.sh (apt-get install chromium), or set CHROMIUM_PATH`,
    );
  }
}

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Where screenshots go (git-ignored): one per test, named by the test. */
export const SCREENSHOTS = join(import.meta.dirname, "..", "screenshots");

export interface TestBrowser {
  context: BrowserContext;
  /** A new tab; `key` signs it in by putting the key where the console keeps it. */
  page(options?: { key?: string; width?: number; height?: number }): Promise<Page>;
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "stackvm-chromium-"));
  mkdirSync(SCREENSHOTS, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1360, height: 900 },
    locale: "en-US",
    timezoneId: "UTC",
  });
  context.setDefaultTimeout(10_000);
  return {
    context,
    async page(options = {}) {
      const page = await context.newPage();
      await page.setViewportSize({ width: options.width ?? 1360, height: options.height ?? 900 });
      if (options.key) {
        await page.addInitScript(
          (key) => sessionStorage.setItem("stackvm.apiKey", key),
          options.key,
        );
      }
      return page;
    },
    async screenshot(page, name) {
      const path = join(SCREENSHOTS, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

import { describe, expect, it } from "vitest";
import { buildConsoleBundle } from "./build";
import { CONSOLE_CSS, CONSOLE_JS } from "./generated/console-bundle";

describe("the committed console bundle", () => {
  it("matches the client sources (else run `npm run build:console`)", async () => {
    const fresh = await buildConsoleBundle();
    const stale =
      "the committed console bundle is stale: run `npm run build:console` and commit it";
    expect(CONSOLE_JS === fresh.js, stale).toBe(true);
    expect(CONSOLE_CSS === fresh.css, stale).toBe(true);
  });
});

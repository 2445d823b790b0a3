import { brotliDecompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { buildConsoleBundle } from "./build";
import { CONSOLE_CSS, CONSOLE_JS_BROTLI } from "./generated/console-bundle";

describe("the committed console bundle", () => {
  it("matches the client sources (else run `npm run build:console`)", async () => {
    const fresh = await buildConsoleBundle();
    const stale =
      "the committed console bundle is stale: run `npm run build:console` and commit it";
    // Compared as text: the compressed bytes may differ between Brotli versions.
    const committed = brotliDecompressSync(Buffer.from(CONSOLE_JS_BROTLI, "base64")).toString();
    expect(committed === fresh.js, stale).toBe(true);
    expect(CONSOLE_CSS === fresh.css, stale).toBe(true);
  });
});

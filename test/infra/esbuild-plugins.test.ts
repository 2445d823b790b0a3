/**
 * The esbuild plugins every function is built with (infra/esbuild-plugins.mjs):
 * a bundle of zod's whole namespace, as `@hono/zod-openapi` reads it, keeps
 * English and no other language, and still says what is wrong in English.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import plugins from "../../infra/esbuild-plugins.mjs";
import { projectRoot } from "./sst-harness";

const entry = `
import { z } from "@hono/zod-openapi";
export const answer = z.object({ n: z.number() }).safeParse({ n: "one" });
export const english = typeof z.locales.en;
export const others = Object.keys(z.locales);
`;

async function bundleAndImport(withPlugins: boolean) {
  const dir = await mkdtemp(join(tmpdir(), "stackvm-plugins-"));
  try {
    const result = await build({
      stdin: { contents: entry, resolveDir: projectRoot, loader: "ts" },
      bundle: true,
      format: "esm",
      platform: "node",
      outfile: join(dir, "index.mjs"),
      metafile: true,
      logLevel: "silent",
      plugins: withPlugins ? plugins : [],
    });
    const inputs = Object.keys(result.metafile.inputs);
    const mod = await import(pathToFileURL(join(dir, "index.mjs")).href);
    return { inputs, mod };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("zod in English only", () => {
  it("drops every other language from a bundle of zod's namespace, and still answers in English", async () => {
    const locales = (inputs: string[]) =>
      inputs.filter((input) => /node_modules\/zod\/v4\/locales\//.test(input));
    const plain = await bundleAndImport(false);
    const english = await bundleAndImport(true);
    // Without the plugin the bundle holds every language; with it, English alone.
    expect(locales(plain.inputs).length).toBeGreaterThan(40);
    expect(locales(english.inputs).map((input) => input.split("/").at(-1))).toEqual(["en.js"]);
    expect(english.mod.english).toBe("function");
    expect(english.mod.others).toEqual(["en"]);
    expect(english.mod.answer.success).toBe(false);
    expect(english.mod.answer.error.issues[0].message).toBe(
      "Invalid input: expected number, received string",
    );
  });
});

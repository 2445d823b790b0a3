/**
 * The esbuild plugins every function is built with (infra/esbuild-plugins.mjs):
 * - a bundle of zod's whole namespace, as `@hono/zod-openapi` reads it, keeps
 *   English and no other language, and still says what is wrong in English;
 * - code loaded on first use gets its own copy of the SDK packages it imports:
 *   the start of a split bundle holds none of the S3 client's protocol, the S3
 *   client still puts and gets an object through its copy (against the local
 *   S3 emulator), and `node:http2`, which only Bedrock's client uses, stays
 *   unloaded at start.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import plugins from "../../infra/esbuild-plugins.mjs";
import { startEmulators } from "../../packages/local/src/emulators";
import { measure } from "../../scripts/bundles";
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

/** A function's shape: DynamoDB at start, S3 on first use (as the worker's large values). */
const splitEntry = `
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
export async function roundTrip({ endpoints, region, credentials }) {
  const dynamo = new DynamoDBClient({ endpoint: endpoints.dynamodb, region, credentials });
  const tables = await dynamo.send(new ListTablesCommand({}));
  const { S3Client, CreateBucketCommand, PutObjectCommand, GetObjectCommand } = await import("@aws-sdk/client-s3");
  const s3 = new S3Client({ endpoint: endpoints.s3, region, credentials, forcePathStyle: true });
  await s3.send(new CreateBucketCommand({ Bucket: "own-copy" }));
  await s3.send(new PutObjectCommand({ Bucket: "own-copy", Key: "k", Body: "through its own copy" }));
  const got = await s3.send(new GetObjectCommand({ Bucket: "own-copy", Key: "k" }));
  return { tables: tables.TableNames, text: await got.Body.transformToString() };
}
// Bedrock's client is the one that uses the SDK's HTTP/2 handler.
export const bedrock = () => import("@aws-sdk/client-bedrock-runtime");
`;

/** Whether importing the bundle loads node:http2, in a fresh process (this one has loaded it for its own reasons). */
function http2AtStart(dir: string): boolean {
  const entry = JSON.stringify(pathToFileURL(join(dir, "index.mjs")).href);
  const answer = execFileSync(process.execPath, [
    "--input-type=module",
    "-e",
    `await import(${entry}); process.stdout.write(String(process.moduleLoadList.includes("NativeModule http2")));`,
  ]);
  return answer.toString() === "true";
}

async function splitBundle(withPlugins: boolean) {
  const dir = await mkdtemp(join(tmpdir(), "stackvm-split-"));
  const result = await build({
    stdin: { contents: splitEntry, resolveDir: projectRoot, loader: "ts" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    mainFields: ["module", "main"],
    outdir: dir,
    entryNames: "index",
    outExtension: { ".js": ".mjs" },
    metafile: true,
    logLevel: "silent",
    plugins: withPlugins ? plugins : [],
  });
  return { dir, start: measure(result.metafile).eagerInputs };
}

describe("code loaded on first use keeps its own copy of the SDK", () => {
  it("leaves S3's XML protocol and node:http2 out of the start, and S3 works through its copy", async () => {
    const xml = (inputs: string[]) =>
      inputs.filter((input) => /protocols\/xml|xml-builder/.test(input));
    const plain = await splitBundle(false);
    const own = await splitBundle(true);
    const emulators = await startEmulators({ dataDir: null });
    try {
      // Without the plugin the start carries S3's protocol; with it, none of it.
      expect(xml(plain.start).length).toBeGreaterThan(0);
      expect(xml(own.start)).toEqual([]);
      expect(http2AtStart(plain.dir)).toBe(true);
      expect(http2AtStart(own.dir)).toBe(false);
      const mod = await import(pathToFileURL(join(own.dir, "index.mjs")).href);
      const answer = await mod.roundTrip(emulators);
      expect(answer.text).toBe("through its own copy");
      expect(Array.isArray(answer.tables)).toBe(true);
    } finally {
      await emulators.stop();
      await rm(plain.dir, { recursive: true, force: true });
      await rm(own.dir, { recursive: true, force: true });
    }
  });
});

/**
 * The sandbox function packaged as a deploy packages it: the handler bundled
 * the way SST bundles it, the runner's scripts added by the `postbuild` hook
 * (`infra/sandbox-scripts.ts`), then invoked in a fresh Node process. Without
 * the hook, the bundled runner looks for its QuickJS worker next to the
 * handler and finds nothing.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleSandboxScripts, nodeBundle, sandboxInstalls } from "../../infra/sandbox-scripts";
import { projectRoot } from "./sst-harness";

let out: string;

/** Invokes the packaged handler with one request in a fresh node; its answer. */
function invoke(request: unknown): { result: unknown; error: { code: string } | null } {
  const child = spawnSync(process.execPath, [join(out, "invoke.mjs"), JSON.stringify(request)], {
    cwd: out,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "" },
    timeout: 50_000,
  });
  const line = child.stdout.trim().split("\n").at(-1) ?? "";
  if (child.status !== 0 || !line.startsWith("{")) {
    throw new Error(`the packaged sandbox did not answer: ${child.stderr || child.stdout}`);
  }
  return JSON.parse(line);
}

beforeAll(async () => {
  // Inside the project, so that the installed packages resolve from its node_modules.
  // A fresh clone has no .stackvm/ yet.
  await mkdir(join(projectRoot, ".stackvm"), { recursive: true });
  out = await mkdtemp(join(projectRoot, ".stackvm", "sandbox-package-"));
  await build({
    entryPoints: [join(projectRoot, "packages/functions/src/sandbox.ts")],
    outfile: join(out, "packages/functions/src/sandbox.mjs"),
    ...nodeBundle,
    external: sandboxInstalls,
    logLevel: "silent",
  });
  const handler = pathToFileURL(join(out, "packages/functions/src/sandbox.mjs")).href;
  await writeFile(
    join(out, "invoke.mjs"),
    [
      `const { handler, close } = await import(${JSON.stringify(handler)});`,
      "const answer = await handler(JSON.parse(process.argv[2]), { getRemainingTimeInMillis: () => 30000 });",
      "await close();",
      "console.log(JSON.stringify({ result: answer.result, error: answer.error }));",
    ].join("\n"),
  );
});

afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

describe("the sandbox function as deployed", () => {
  it("cannot run JavaScript with the handler's bundle alone", () => {
    const answer = invoke({ v: 1, language: "javascript", code: "1 + 2" });
    expect(answer.error?.code).toBe("internal");
  });

  it("runs JavaScript once the postbuild hook has added the runner's scripts", async () => {
    const written = await bundleSandboxScripts(out, projectRoot);
    expect(written.map((file) => file.slice(out.length + 1)).sort()).toEqual([
      "packages/functions/src/pyodide-child.ts",
      "packages/functions/src/quickjs-worker.ts",
    ]);
    expect(invoke({ v: 1, language: "javascript", code: "1 + 2" })).toEqual({
      result: 3,
      error: null,
    });
  });
});

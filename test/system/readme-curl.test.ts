/**
 * The README's curl examples, run as written by bash against the local stack: the
 * only change is the port (the test stack's is free, not 3000) and the folder
 * (the API key sits in `.stackvm/api-key` of a scratch folder, as `npm start`
 * writes it). Each answer is JSON without an `error`, and the plan's task
 * reaches its answer with the id the shell captured.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeXlsx } from "../support/files";
import { makePdf } from "../support/pdf";
import { useTestStack } from "../support/stack";

const t = useTestStack();
let folder: string;

/** The README's ```sh blocks that call the API. */
async function curlBlocks(): Promise<string[]> {
  const readme = await readFile(resolve(import.meta.dirname, "../../README.md"), "utf8");
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((block) => block.includes("curl -s"));
}

/** Runs a block in bash in the scratch folder, on the test stack's port. */
function bash(block: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `KEY=$(cat .stackvm/api-key)\n${block.replaceAll("localhost:3000", new URL(t.url).host)}`;
  return new Promise((done) =>
    execFile("bash", ["-c", script], { cwd: folder }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

/** Every JSON answer printed on its own line (or run together, as curl prints them). */
const answers = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .replace(/}\{/g, "}\n{")
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "svm-readme-"));
  await mkdir(join(folder, ".stackvm"));
  await writeFile(join(folder, ".stackvm/api-key"), t.apiKey);
  await writeFile(join(folder, "guide.pdf"), makePdf([["The handbook says: be kind."]]));
  await writeFile(join(folder, "sales.xlsx"), await makeXlsx(["region", "sales"], [["north", 7]]));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("the README's curl examples", () => {
  it("start a plan, capture its id in the shell, and read the task and its commits", async () => {
    const [first] = await curlBlocks();
    expect(first).toContain("TASK=$(");
    const run = await bash(first!);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const [created, task, commits] = answers(run.stdout);
    expect(created).toMatchObject({ status: "queued", branch: "main", warnings: [] });
    expect(task).toMatchObject({ task_id: created!.task_id });
    expect(commits).toHaveProperty("commits");
    const done = await t.waitForTask(created!.task_id as string);
    expect(done).toMatchObject({ status: "completed", final_answer: 42 });
    // The quick start writes nothing into the folder it runs in (a checkout: biome ci would see it).
    expect((await readdir(folder)).sort()).toEqual([".stackvm", "guide.pdf", "sales.xlsx"]);
  });

  it("answers every other example without an error", async () => {
    const others = (await curlBlocks()).slice(1);
    expect(others.length).toBeGreaterThanOrEqual(2);
    for (const block of others) {
      const run = await bash(block);
      expect(run.code, block).toBe(0);
      const got = answers(run.stdout);
      expect(got.length, block).toBeGreaterThan(0);
      expect(got.filter((a) => a.error !== undefined && a.error !== null)).toEqual([]);
    }
  });
});

/**
 * `npm start` as a user runs it: a process that serves the API, keeps its data
 * across a restart, and stops cleanly on Ctrl-C (SIGINT) with nothing left behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
let dataDir: string;

function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "packages/local/src/main.ts"], {
    cwd: root,
    env: { ...process.env, PORT: "0", STACKVM_DATA_DIR: dataDir, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolveStart, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no start within 60 s: ${out}`)), 60_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /running at (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolveStart({ child, url: match[1]! });
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("exit", (code) => reject(new Error(`exited with ${code} before it started: ${out}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => {
    child.once("exit", (code) => done(code));
    child.kill("SIGINT");
  });
}

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("npm start", () => {
  it("serves the API, keeps data across a restart, and stops cleanly on Ctrl-C", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "stackvm-start-"));
    const first = await start({});
    const key = (await readFile(join(dataDir, "api-key"), "utf8")).trim();
    expect(key).toMatch(/^svm_local_/);
    expect(await (await fetch(`${first.url}/healthz`)).json()).toEqual({ ok: true });
    const created = await fetch(`${first.url}/v1/tasks`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "kept" } }],
      }),
    });
    const { task_id } = (await created.json()) as { task_id: string };
    let status = "";
    for (let i = 0; i < 100 && status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const res = await fetch(`${first.url}/v1/tasks/${task_id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      status = ((await res.json()) as { status: string }).status;
    }
    expect(status).toBe("completed");
    expect(await stop(first.child)).toBe(0);

    const second = await start({});
    const res = await fetch(`${second.url}/v1/tasks/${task_id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(await res.json()).toMatchObject({ status: "completed", final_answer: "kept" });
    expect(await stop(second.child)).toBe(0);
    // Nothing listens any more.
    await expect(fetch(`${second.url}/healthz`)).rejects.toThrow();
  }, 150_000);

  it("stops with a message naming a wrong setting", async () => {
    dataDir = dataDir ?? (await mkdtemp(join(tmpdir(), "stackvm-start-")));
    await expect(start({ PORT: "not-a-port" })).rejects.toThrow(/PORT must be a whole number/);
    // A model per role: a reasoning server's wrong setting stops the start, named.
    await expect(start({ REASON_LLM_TEMPERATURE: "3" })).rejects.toThrow(
      /REASON_LLM_TEMPERATURE must be a number from 0 to 2/,
    );
    await expect(start({ REASON_OPENAI_BASE_URL: "reasoner:8080" })).rejects.toThrow(
      /REASON_OPENAI_BASE_URL/,
    );
  }, 60_000);
});

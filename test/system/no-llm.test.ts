// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/**
 * The local stack with no LLM configured: a goal is refused at once with a 422
 * that names the settings, and leaves no task; a plan still runs; a plan whose
 * step fails names that step as its first cause everywhere (task, list, CLI,
 * webhook), with no plan update tried; the start-up banner says that no LLM is
 * configured and what that means.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { llmBannerLines } from "@stackvm/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/run-cli";
import { uploadDocument } from "../support/knowledge";
import { useTestStack } from "../support/stack";

const t = useTestStack({ env: { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined } });

/** A webhook receiver on loopback (allowed in local mode): the bodies it got. */
const delivered: string[] = [];
let receiver: Server;
let hook: string;
beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      delivered.push(Buffer.concat(chunks).toString("utf8"));
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

describe("no LLM configured", () => {
  it("answers 422 to a goal, saying which settings to set, and keeps no task", async () => {
    const refused = await t.api("POST", "/v1/tasks", { goal: "Plan my week" });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("llm_not_configured");
    expect(refused.body.error.message).toContain("OPENAI_BASE_URL");
    expect(refused.body.error.message).toContain("LLM_MODEL");
    const listed = await t.api("GET", "/v1/tasks");
    expect(listed.body.tasks).toEqual([]);
  });

  it("runs a plan that needs no LLM", async () => {
    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: 42 } }];
    const created = await t.api("POST", "/v1/tasks", { plan });
    expect(created.status).toBe(202);
    const done = await t.waitForTask(created.body.task_id);
    expect(done).toMatchObject({ status: "completed", final_answer: 42 });
  });

  it("fails a plan at its failed step, names that step everywhere, and tries no plan update", async () => {
    const plan = [
      { seq_no: 0, type: "assign", parameters: { a: 6 } },
      { seq_no: 1, type: "assign", parameters: { b: "${a} / 0" } },
      { seq_no: 2, type: "assign", parameters: { final_answer: "${b}" } },
    ];
    const created = await t.api("POST", "/v1/tasks", { plan, webhook_url: hook });
    expect(created.status).toBe(202);
    const id = created.body.task_id;
    const done = await t.waitForTask(id);
    const cause = /^step 1 failed: \[arithmetic_error\] Cannot compute "6 \/ 0"/;
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(cause);
    expect(done.error).toContain("No plan update was tried: no LLM is configured");
    expect(done.error).not.toContain("OPENAI_API_KEY");

    const commits = await t.api("GET", `/v1/tasks/${id}/branches/main/commits`);
    expect(commits.body.commits.map((c: { type: string }) => c.type)).toEqual([
      "error",
      "step",
      "plan",
    ]);
    const listed = await t.api("GET", "/v1/tasks");
    const row = listed.body.tasks.find((r: { task_id: string }) => r.task_id === id);
    expect(row.error).toBe(done.error);

    const deadline = Date.now() + 30_000;
    while (!delivered.some((b) => b.includes(id)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const payload = JSON.parse(delivered.find((b) => b.includes(id))!);
    expect(payload.data.error).toBe(done.error);

    const shown = await runCli(["task", id], {
      STACKVM_URL: t.url,
      STACKVM_API_KEY: t.apiKey,
    });
    expect(shown.stdout.replace(/\s+/g, " ")).toContain("step 1 failed: [arithmetic_error]");
  });

  it("refuses a goal trigger, a goal schedule and a fork with a suggestion with 422, storing nothing", async () => {
    const trigger = await t.api("POST", "/v1/triggers", {
      name: "gh",
      goal: "Summarize ${payload}",
    });
    expect(trigger.status).toBe(422);
    expect(trigger.body.error.code).toBe("llm_not_configured");
    expect(trigger.body.error.message).toContain("give the trigger a plan instead of a goal");
    expect((await t.api("GET", "/v1/triggers")).body.triggers).toEqual([]);

    const schedule = await t.api("POST", "/v1/schedules", {
      name: "daily",
      cron: "0 9 * * *",
      timezone: "UTC",
      goal: "Plan my day",
    });
    expect(schedule.status).toBe(422);
    expect(schedule.body.error.code).toBe("llm_not_configured");
    expect((await t.api("GET", "/v1/schedules")).body.schedules).toEqual([]);

    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }];
    const created = await t.api("POST", "/v1/tasks", { plan });
    await t.waitForTask(created.body.task_id);
    const id = created.body.task_id;
    const [root] = (await t.api("GET", `/v1/tasks/${id}/branches/main/commits`)).body.commits.slice(
      -1,
    );
    const fork = await t.api("POST", `/v1/tasks/${id}/branches`, {
      from_commit: root.commit_id,
      suggestion: "answer 2 instead",
    });
    expect(fork.status).toBe(422);
    expect(fork.body.error.message).toContain("fork with an edited plan or step instead");
    const branches = (await t.api("GET", `/v1/tasks/${id}/branches`)).body.branches;
    expect(branches.map((b: { name: string }) => b.name)).toEqual(["main"]);
  });

  it("refuses a document upload with no embedding endpoint, naming it, and keeps no document", async () => {
    expect((await t.api("POST", "/v1/knowledge-bases", { name: "notes" })).status).toBe(201);
    const upload = await uploadDocument(t, "notes", {
      name: "a.txt",
      type: "text/plain",
      bytes: "Otters hold hands while they sleep.",
    });
    expect(upload.status).toBe(422);
    expect(upload.body.error.code).toBe("embeddings_not_configured");
    expect(upload.body.error.message).toContain("EMBEDDING_MODEL");
    const docs = await t.api("GET", "/v1/knowledge-bases/notes/documents");
    expect(docs.body.documents).toEqual([]);
  });

  it("says so in the start-up banner", () => {
    expect(t.stack.llm).toBeNull();
    const banner = llmBannerLines(t.stack.llm).join("\n");
    expect(banner).toContain("none configured");
    expect(banner).toContain("OPENAI_BASE_URL");
  });
});

describe("the banner of a configured LLM", () => {
  it("names the endpoint, the models of each role and how long an answer may take", () => {
    const banner = llmBannerLines({
      endpoint: "http://127.0.0.1:11434/v1",
      models: {
        planner: "qwen3:14b",
        generation: "qwen3:4b",
        evaluation: "qwen3:14b",
        embedding: "nomic-embed-text",
      },
      limits: { timeoutMs: 300_000, unreachableSeconds: 60 },
    }).join("\n");
    expect(banner).toContain("http://127.0.0.1:11434/v1");
    expect(banner).toContain("an answer may take 300 s (5 min) (LLM_TIMEOUT_MS)");
    expect(banner).toContain("after 60 s (STACKVM_LLM_UNREACHABLE_SECONDS)");
    expect(banner).toMatch(/planner qwen3:14b, generation qwen3:4b/);
    expect(banner).toContain("embedding nomic-embed-text");
  });
});

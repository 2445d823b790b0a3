/**
 * `GET /metrics` scraped by a real Prometheus (Debian's package), started by
 * the test on loopback with a scrape config that carries the operator key: the
 * series of steps, their duration, LLM calls, tokens, cost, queue depth,
 * retries and the DLQ are in its HTTP API after a task ran. And the route
 * answers no one without the operator key.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

const PROMETHEUS = process.env.PROMETHEUS_PATH ?? "/usr/bin/prometheus";

let t: TestStack;
let prometheus: ChildProcess;
let promUrl: string;
let dir: string;

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  t = await startTestStack({ env: { LLM_MAX_ATTEMPTS: "1" } });
  dir = mkdtempSync(join(tmpdir(), "stackvm-prom-"));
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  writeFileSync(
    join(dir, "prometheus.yml"),
    [
      "global:",
      "  scrape_interval: 1s",
      "scrape_configs:",
      "  - job_name: stackvm",
      "    metrics_path: /metrics",
      "    authorization:",
      `      credentials: ${ADMIN_KEY}`,
      "    static_configs:",
      `      - targets: ["${new URL(t.url).host}"]`,
      "",
    ].join("\n"),
  );
  prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: "ignore" },
  );
});

afterAll(async () => {
  prometheus?.kill("SIGTERM");
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A PromQL query's value, once Prometheus has one that `ok` accepts. */
async function query(promql: string, ok: (value: number) => boolean): Promise<number> {
  const deadline = Date.now() + 30_000;
  let last: unknown = null;
  for (;;) {
    try {
      const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
      last = await res.json();
      const result = (last as { data?: { result?: Array<{ value: [number, string] }> } }).data
        ?.result;
      if (result && result.length > 0) {
        const value = Number(result[0]!.value[1]);
        if (ok(value)) return value;
      }
    } catch (error) {
      last = String(error);
    }
    if (Date.now() > deadline) throw new Error(`${promql}: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("GET /metrics", () => {
  it("is scraped by Prometheus: steps, duration, LLM calls, tokens, cost, queue depth, retries, DLQ", async () => {
    t.llm.queue("text", { fault: "500", message: "scripted outage" });
    t.llm.on("text", "hello");
    const plan = [
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "llm_generate",
          tool_params: { prompt: "Hi" },
          output_vars: ["x"],
        },
      },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
    ];
    const created = await t.api("POST", "/v1/tasks", { plan });
    expect((await t.waitForTask(created.body.task_id, { timeoutMs: 60_000 })).status).toBe(
      "completed",
    );

    expect(await query("stackvm_steps_total", (v) => v >= 3)).toBeGreaterThanOrEqual(3);
    expect(
      await query("stackvm_step_duration_seconds_count", (v) => v >= 3),
    ).toBeGreaterThanOrEqual(3);
    expect(await query("stackvm_llm_calls_total", (v) => v >= 1)).toBeGreaterThanOrEqual(1);
    expect(await query('stackvm_llm_tokens_total{kind="input"}', (v) => v > 0)).toBeGreaterThan(0);
    expect(await query('stackvm_llm_tokens_total{kind="output"}', (v) => v > 0)).toBeGreaterThan(0);
    expect(await query("stackvm_llm_cost_usd_total", () => true)).toBeGreaterThanOrEqual(0);
    expect(
      await query('stackvm_branches_ended_total{status="completed"}', (v) => v >= 1),
    ).toBeGreaterThanOrEqual(1);
    expect(await query("stackvm_queue_depth", () => true)).toBeGreaterThanOrEqual(0);
    expect(await query("stackvm_dlq_depth", () => true)).toBe(0);
    expect(await query("stackvm_dlq_arrivals_total", () => true)).toBe(0);
    // The 500 failed the step once: its message went back to the queue and ran again.
    expect(await query("stackvm_step_retries_total", (v) => v >= 1)).toBeGreaterThanOrEqual(1);
    expect(await query('up{job="stackvm"}', (v) => v === 1)).toBe(1);
  });

  it("answers no one without the operator key, and nothing but GET", async () => {
    const bare = await fetch(`${t.url}/metrics`);
    expect(bare.status).toBe(401);
    const tenant = await fetch(`${t.url}/metrics`, {
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(tenant.status).toBe(401);
    expect(await tenant.text()).not.toContain("stackvm_steps_total");
    const post = await fetch(`${t.url}/metrics`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(post.status).toBe(405);
    const ok = await fetch(`${t.url}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toContain("text/plain");
    expect(await ok.text()).toContain("# TYPE stackvm_steps_total counter");
  });
});

/**
 * `GET /v1/usage` over HTTP: a tenant reads its own month by namespace (runs,
 * steps, LLM calls, tokens, cost), earlier months are kept, and a second
 * tenant reads none of the first's.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/run-cli";
import { tenantKey } from "../support/attacker";
import { call, finish } from "../support/plans";
import { ADMIN_KEY, useTestStack } from "../support/stack";

const t = useTestStack();

const PLAN = [call(0, "llm_generate", { prompt: "Say hi" }, ["x"]), finish(1, "${x}")];

const tenant = (name: string) => tenantKey(t, name, "ci");

async function runIn(key: string, namespace: string): Promise<void> {
  const created = await t.api("POST", "/v1/tasks", { plan: PLAN, namespace }, { key });
  expect(created.status).toBe(202);
  expect((await t.waitForTask(created.body.task_id, { key })).status).toBe("completed");
}

describe("GET /v1/usage", () => {
  it("answers the tenant's month by namespace, and nothing of it to another tenant", async () => {
    t.llm.on("text", "hello there");
    const alice = await tenant("usage-alice");
    const mallory = await tenant("usage-mallory");
    const ns = await t.api(
      "PUT",
      "/v1/namespaces/research",
      { allowed_tools: ["llm_generate"] },
      { key: alice },
    );
    expect(ns.status).toBeLessThan(300);
    await runIn(alice, "research");
    await runIn(alice, "research");
    await runIn(alice, "default");

    const usage = await t.api("GET", "/v1/usage", undefined, { key: alice });
    expect(usage.status).toBe(200);
    expect(usage.body.tenant).toBe("usage-alice");
    const [month] = usage.body.months;
    expect(month.month).toBe(new Date().toISOString().slice(0, 7));
    expect(month.namespaces.map((n: { namespace: string }) => n.namespace)).toEqual([
      "default",
      "research",
    ]);
    const research = month.namespaces[1];
    expect(research).toMatchObject({ runs: 2, steps: 4, llm_calls: 2 });
    expect(research.input_tokens).toBeGreaterThan(0);
    expect(research.output_tokens).toBeGreaterThan(0);
    expect(month.runs).toMatchObject({ runs: 3, steps: 6, llm_calls: 3 });
    expect(month.runs.input_tokens).toBe(research.input_tokens + month.namespaces[0].input_tokens);
    // The budget's count: every call's tokens, the same as the runs' here (no call was outside a run).
    expect(month.tokens).toBe(month.runs.input_tokens + month.runs.output_tokens);

    const theirs = await t.api("GET", "/v1/usage", undefined, { key: mallory });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual({
      tenant: "usage-mallory",
      months: [
        {
          month: month.month,
          tokens: 0,
          cost_usd: 0,
          runs: { runs: 0, steps: 0, llm_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
          namespaces: [],
        },
      ],
    });
    // The CLI prints the same month as a table, and the same JSON with --json.
    const env = { STACKVM_URL: t.url, STACKVM_API_KEY: alice, NO_COLOR: "1" };
    const printed = await runCli(["usage"], env);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain(`${month.month}  budget counted ${month.tokens} tokens`);
    expect(printed.stdout).toMatch(/\n {2}research +2 +4 +2 +\d+ +\d+ +\$\d\.\d{4}\n/);
    expect(printed.stdout).toMatch(/\n {2}total +3 +6 +3 /);
    const asJson = await runCli(["usage", "--json", "--months", "1"], env);
    expect(JSON.parse(asJson.stdout)).toEqual(usage.body);
    const badMonths = await runCli(["usage", "--months", "0"], env);
    expect(badMonths.code).toBe(2);
    expect(badMonths.stderr).toContain("--months must be a whole number from 1 to 36");

    // The operator's view of the same tenant agrees with what it reads itself.
    const admin = await t.api("GET", "/v1/admin/tenants/usage-alice/quotas", undefined, {
      key: ADMIN_KEY,
    });
    expect(admin.body.usage.tokens).toBe(month.tokens);
  });

  it("answers earlier months that had usage, newest first, within `months`", async () => {
    const key = await tenant("usage-history");
    // Months the tenant spent in before, as the quota store wrote them.
    const items = t.stack.system.ports.items;
    const now = new Date();
    const back = (n: number) =>
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - n, 1)).toISOString().slice(0, 7);
    for (const n of [2, 5]) {
      await items.update(
        { pk: "T#usage-history", sk: `USAGE#${back(n)}#NS#default` },
        {
          add: [
            [["runs"], n],
            [["steps"], 10 * n],
            [["llm_calls"], n],
            [["input_tokens"], 100],
            [["output_tokens"], 7],
            [["cost_usd"], 0.5],
          ],
        },
      );
    }
    const three = await t.api("GET", "/v1/usage?months=3", undefined, { key });
    expect(three.body.months.map((m: { month: string }) => m.month)).toEqual([back(0), back(2)]);
    expect(three.body.months[1].runs).toMatchObject({
      runs: 2,
      steps: 20,
      input_tokens: 100,
      cost_usd: 0.5,
    });
    const all = await t.api("GET", "/v1/usage?months=36", undefined, { key });
    expect(all.body.months.map((m: { month: string }) => m.month)).toEqual([
      back(0),
      back(2),
      back(5),
    ]);
  });

  it.each([["0"], ["37"], ["twelve"], ["1.5"]])("refuses months=%s", async (months) => {
    const refused = await t.api("GET", `/v1/usage?months=${months}`);
    expect(refused.status).toBe(400);
  });

  it("refuses a request without a key", async () => {
    expect((await t.api("GET", "/v1/usage", undefined, { key: null })).status).toBe(401);
  });
});

/**
 * The attacker of the isolation tests: a second tenant's key (the tenant-wall,
 * stream-token, events and MCP tests), and one call step run as that tenant,
 * whose task must fail, with the error it failed with (test/system/tenant-walls
 * and web-tools), so that every outbound tool is attacked through the same plan.
 */
import { expect } from "vitest";
import { ADMIN_KEY, type TestStack } from "./stack";

/**
 * A key of a second tenant (`mallory`, `attacker`), made by the admin: the
 * tenant the isolation tests attack from.
 */
export async function tenantKey(t: TestStack, tenant: string, keyName: string): Promise<string> {
  const made = await t.api(
    "POST",
    `/v1/admin/tenants/${tenant}/keys`,
    { name: keyName },
    { key: ADMIN_KEY },
  );
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body.key;
}

/** A key of the tenant `attacker`. */
export const attackerKey = (t: TestStack): Promise<string> => tenantKey(t, "attacker", "a");

/** Runs one call step as the attacker and returns the error its task failed with. */
export async function failedCall(
  t: TestStack,
  key: string,
  namespace: string,
  tool: string,
  params: unknown,
): Promise<{ code: string; message: string }> {
  const plan = [
    {
      seq_no: 0,
      type: "calling",
      parameters: { tool_name: tool, tool_params: params, output_vars: ["out"] },
    },
    { seq_no: 1, type: "assign", parameters: { final_answer: "${out}" } },
  ];
  const created = await t.api("POST", "/v1/tasks", { namespace, plan }, { key });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const task = await t.waitForTask(created.body.task_id, { key, timeoutMs: 60_000 });
  expect(task.status, JSON.stringify(task)).toBe("failed");
  const commits = await t.api(
    "GET",
    `/v1/tasks/${task.task_id}/branches/main/commits?limit=100`,
    undefined,
    { key },
  );
  return commits.body.commits.find((c: { error: unknown }) => c.error)?.error;
}

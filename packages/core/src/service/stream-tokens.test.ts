import { describe, expect, it } from "vitest";
import { StreamTokens } from "./stream-tokens";

function setup() {
  let now = 1_700_000_000_000;
  const secrets = new Map([
    ["acme", "acme-signing-secret"],
    ["globex", "globex-signing-secret"],
  ]);
  const tokens = new StreamTokens({
    clock: { now: () => now },
    secret: async (tenant) => secrets.get(tenant) ?? "made",
    existingSecret: async (tenant) => secrets.get(tenant) ?? null,
  });
  return { tokens, secrets, tick: (ms: number) => (now += ms) };
}

/** The token with its payload replaced, its MAC kept. */
function withPayload(token: string, payload: unknown): string {
  const mac = token.split(".")[1];
  return `stk_${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${mac}`;
}

describe("StreamTokens", () => {
  it("grants reading one task of one tenant until it expires", async () => {
    const { tokens, tick } = setup();
    const { token, expires_at } = await tokens.issue("acme", "tsk_1", 60);
    expect(expires_at).toBe(new Date(1_700_000_060_000).toISOString());
    expect(await tokens.verify(token)).toEqual({
      tenant: "acme",
      taskId: "tsk_1",
      expires: 1_700_000_060,
    });
    tick(59_000);
    expect(await tokens.verify(token)).not.toBeNull();
    tick(1_000);
    expect(await tokens.verify(token)).toBeNull();
  });

  it("refuses a token whose payload names another task or tenant, keeping the MAC", async () => {
    const { tokens } = setup();
    const { token } = await tokens.issue("acme", "tsk_1", 60);
    const payload = JSON.parse(
      Buffer.from(token.slice(4).split(".")[0]!, "base64url").toString(),
    ) as Record<string, unknown>;
    for (const changed of [
      { ...payload, k: "tsk_2" },
      { ...payload, t: "globex" },
      { ...payload, e: Number(payload.e) + 3600 },
    ]) {
      expect(await tokens.verify(withPayload(token, changed))).toBeNull();
    }
  });

  it("refuses a token signed with another tenant's secret, or once the secret changed", async () => {
    const { tokens, secrets } = setup();
    const theirs = await tokens.issue("globex", "tsk_1", 60);
    const payload = { v: 1, t: "acme", k: "tsk_1", e: 1_700_000_060 };
    expect(await tokens.verify(withPayload(theirs.token, payload))).toBeNull();
    const { token } = await tokens.issue("acme", "tsk_1", 60);
    secrets.set("acme", "rotated");
    expect(await tokens.verify(token)).toBeNull();
    secrets.delete("acme");
    expect(await tokens.verify(token)).toBeNull();
  });

  it.each([
    ["no prefix", (t: string) => t.slice(4)],
    ["a flipped MAC character", (t: string) => `${t.slice(0, -1)}${t.endsWith("A") ? "B" : "A"}`],
    ["a third part", (t: string) => `${t}.x`],
    ["no MAC", (t: string) => t.split(".")[0]!],
    ["a payload that is not JSON", (t: string) => `stk_bm90IGpzb24.${t.split(".")[1]}`],
    ["an oversized token", (t: string) => `${t}${"A".repeat(2000)}`],
    ["a key instead", () => "svm_acme_secret"],
  ])("refuses %s", async (_name, change) => {
    const { tokens } = setup();
    const { token } = await tokens.issue("acme", "tsk_1", 60);
    expect(await tokens.verify(change(token))).toBeNull();
  });
});

import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import { newWebhookSecret, signWebhook, verifyWebhook, webhookHeaders } from "./signature";

const NOW = 1_767_225_600; // 2026-01-01T00:00:00Z
const body = JSON.stringify({ order: { id: 42, total: "9.90" } });

describe("webhook signatures", () => {
  it("verifies what it signs", () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders(secret, "msg_1", NOW, body);
    expect(verifyWebhook(secret, headers, body, NOW)).toBe("msg_1");
  });

  it("makes secrets of 32 key bytes behind whsec_", () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
  });

  it("signs as the standardwebhooks reference library verifies, and the other way round", () => {
    vi.useFakeTimers({ now: NOW * 1000 });
    try {
      const secret = newWebhookSecret();
      const reference = new Webhook(secret);
      expect(reference.verify(body, webhookHeaders(secret, "msg_2", NOW, body))).toEqual(
        JSON.parse(body),
      );
      const theirs = reference.sign("msg_3", new Date(NOW * 1000), body);
      expect(signWebhook(secret, "msg_3", NOW, body)).toBe(theirs);
      const headers = { "webhook-id": "msg_3", "webhook-timestamp": String(NOW) };
      expect(verifyWebhook(secret, { ...headers, "webhook-signature": theirs }, body, NOW)).toBe(
        "msg_3",
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it("accepts a header with several signatures when one matches", () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders(secret, "msg_1", NOW, body);
    const old = signWebhook(newWebhookSecret(), "msg_1", NOW, body);
    headers["webhook-signature"] = `v2,abc ${old} ${headers["webhook-signature"]}`;
    expect(verifyWebhook(secret, headers, body, NOW)).toBe("msg_1");
  });

  it.each([
    ["a wrong secret", () => webhookHeaders(newWebhookSecret(), "msg_1", NOW, body), body],
    ["a changed body", (s: string) => webhookHeaders(s, "msg_1", NOW, body), `${body} `],
    [
      "a changed id",
      (s: string) => ({ ...webhookHeaders(s, "msg_1", NOW, body), "webhook-id": "msg_2" }),
      body,
    ],
    ["a timestamp 6 minutes old", (s: string) => webhookHeaders(s, "msg_1", NOW - 360, body), body],
    [
      "a timestamp 6 minutes ahead",
      (s: string) => webhookHeaders(s, "msg_1", NOW + 360, body),
      body,
    ],
  ])("refuses %s with a 401", (_name, headersFor, sent) => {
    const secret = newWebhookSecret();
    expect(() => verifyWebhook(secret, headersFor(secret), sent, NOW)).toThrow(
      expect.objectContaining({ kind: "unauthorized" }),
    );
  });

  it("names the missing header", () => {
    const secret = newWebhookSecret();
    const { "webhook-signature": _, ...headers } = webhookHeaders(secret, "msg_1", NOW, body);
    expect(() => verifyWebhook(secret, headers, body, NOW)).toThrow(/webhook-signature/);
  });

  it("accepts a timestamp just inside the tolerance", () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders(secret, "msg_1", NOW - 300, body);
    expect(verifyWebhook(secret, headers, body, NOW)).toBe("msg_1");
  });
});

/**
 * The Standard Webhooks signature scheme (standardwebhooks.com), both ways:
 * incoming trigger deliveries are verified with it and outgoing task webhooks are
 * signed with it.
 *
 * - secret: `whsec_` + base64 of the key bytes;
 * - headers: `webhook-id`, `webhook-timestamp` (unix seconds), `webhook-signature`;
 * - signature: `v1,` + base64 of HMAC-SHA256 over `{id}.{timestamp}.{raw body}`;
 *   the header may carry several, separated by spaces (secret rotation), and one
 *   match is enough;
 * - a timestamp more than five minutes away from now is refused (replays).
 *
 * Written on node:crypto rather than the `standardwebhooks` package: that package
 * reads `Date.now()` itself (the core takes time from its `Clock`) and decodes the
 * body as a string before signing (a body that is not UTF-8 would not verify).
 * The tests check that it verifies what this signs, and the other way round.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { UnauthorizedError } from "../errors";

export const SECRET_PREFIX = "whsec_";

/** How far a delivery's timestamp may be from now, in seconds. */
export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;

/** The three headers, lower-case as HTTP/2 and Hono give them. */
export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** A new signing secret: `whsec_` and 32 random bytes in base64 (256 bits). */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

/** The key bytes of a `whsec_` secret. */
function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0) throw new TypeError("a webhook secret must hold at least one key byte");
  return key;
}

/** The signature of one message: `v1,{base64 HMAC-SHA256}`. */
export function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string | Uint8Array,
): string {
  const mac = createHmac("sha256", keyOf(secret))
    .update(`${id}.${timestampSeconds}.`)
    .update(body)
    .digest("base64");
  return `v1,${mac}`;
}

/**
 * The headers that sign a message now.
 *
 * @example
 * const headers = webhookHeaders(secret, "msg_123", Math.floor(Date.now() / 1000), body);
 * await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body });
 */
export function webhookHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string | Uint8Array,
): WebhookHeaders {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signWebhook(secret, id, timestampSeconds, body),
  };
}

/**
 * Verifies a delivery against the secret at `nowSeconds`; answers the `webhook-id`.
 * Every failure is an `UnauthorizedError` (401) whose message says what was wrong,
 * never what the right signature would have been.
 */
export function verifyWebhook(
  secret: string,
  headers: Partial<Record<keyof WebhookHeaders, string | undefined>>,
  body: string | Uint8Array,
  nowSeconds: number,
  toleranceSeconds = TIMESTAMP_TOLERANCE_SECONDS,
): string {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  const missing = [
    id ? null : "webhook-id",
    timestamp ? null : "webhook-timestamp",
    signatures ? null : "webhook-signature",
  ].filter((h) => h !== null);
  if (missing.length > 0 || !id || !timestamp || !signatures) {
    throw new UnauthorizedError(
      `missing header(s) ${missing.join(", ")}: sign deliveries with the Standard Webhooks scheme (webhook-id, webhook-timestamp, webhook-signature)`,
    );
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new UnauthorizedError("webhook-timestamp must be unix seconds (digits only)");
  }
  const seconds = Number(timestamp);
  if (Math.abs(nowSeconds - seconds) > toleranceSeconds) {
    throw new UnauthorizedError(
      `webhook-timestamp ${seconds} is more than ${toleranceSeconds} seconds away from now (${nowSeconds}): sign each delivery when it is sent`,
    );
  }
  const expected = Buffer.from(signWebhook(secret, id, seconds, body).slice(3), "base64");
  for (const candidate of signatures.split(" ")) {
    const [version, value] = candidate.split(",", 2);
    if (version !== "v1" || !value) continue;
    const given = Buffer.from(value, "base64");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return id;
  }
  throw new UnauthorizedError(
    "no webhook-signature matches: sign `{webhook-id}.{webhook-timestamp}.{raw body}` with HMAC-SHA256 under the trigger's secret (base64 after `whsec_`), sent as `v1,{base64}`",
  );
}

/**
 * Stream tokens (`POST /v1/tasks/{id}/stream-token`): a short-lived credential
 * that reads one task of one tenant and nothing else, so that a web page can
 * watch a task with a native `EventSource` (which sends no headers) without
 * holding the tenant's API key. The API takes it as `?token=` on the task's read
 * routes only (`api/src/auth.ts` says which).
 *
 * A token is `stk_{payload}.{mac}`: the payload names the tenant, the task and
 * the expiry, and the MAC is an HMAC-SHA256 under a key derived from the
 * tenant's signing secret (the one its webhooks are signed with) for this use
 * alone, so a token is never a webhook signature nor a resume token. Nothing is
 * stored: checking a token reads the tenant's secret and writes nothing, and a
 * forged, altered or expired one is refused the same way.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Clock } from "../ports/clock";

const TOKEN_PREFIX = "stk_";
/** The longest a token may be: what a tenant, a task id and an expiry take, with room. */
const MAX_TOKEN_CHARS = 1024;
/** How long a token lives unless asked otherwise. */
export const STREAM_TOKEN_DEFAULT_SECONDS = 600;
/** The shortest and longest lives a caller may ask for. */
export const STREAM_TOKEN_MIN_SECONDS = 30;
export const STREAM_TOKEN_MAX_SECONDS = 3600;

/** What a valid token grants: reading this task of this tenant, until `expires` (epoch s). */
export interface StreamGrant {
  tenant: string;
  taskId: string;
  expires: number;
}

interface Payload {
  /** version, tenant, task, expiry (epoch seconds) */
  v: 1;
  t: string;
  k: string;
  e: number;
}

export interface StreamTokensDeps {
  clock: Clock;
  /** The tenant's signing secret, made on first use (`WebhookService.secret`). */
  secret: (tenant: string) => Promise<string>;
  /** The tenant's signing secret if it has one, made never (`WebhookService.existingSecret`). */
  existingSecret: (tenant: string) => Promise<string | null>;
}

/**
 * @example
 * const { token } = await tokens.issue("acme", "tsk_1", 600);
 * await tokens.verify(token); // { tenant: "acme", taskId: "tsk_1", expires }
 */
export class StreamTokens {
  constructor(private readonly deps: StreamTokensDeps) {}

  /** A token that reads `taskId` of `tenant` for `seconds`; the caller checked the task is there. */
  async issue(
    tenant: string,
    taskId: string,
    seconds = STREAM_TOKEN_DEFAULT_SECONDS,
  ): Promise<{ token: string; expires_at: string }> {
    const expires = Math.floor(this.deps.clock.now() / 1000) + seconds;
    const payload: Payload = { v: 1, t: tenant, k: taskId, e: expires };
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    const mac = macWith(await this.deps.secret(tenant), body);
    return {
      token: `${TOKEN_PREFIX}${body}.${mac}`,
      expires_at: new Date(expires * 1000).toISOString(),
    };
  }

  /** Whether a string is shaped like a stream token at all (before it is checked). */
  static looksLike(value: string): boolean {
    return value.startsWith(TOKEN_PREFIX);
  }

  /** What a well-signed, unexpired token grants, or null (forged, altered, expired, unknown tenant). */
  async verify(token: string): Promise<StreamGrant | null> {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > MAX_TOKEN_CHARS) return null;
    const [body, mac, extra] = token.slice(TOKEN_PREFIX.length).split(".");
    if (!body || !mac || extra !== undefined) return null;
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, "base64url").toString()) as Payload;
    } catch {
      return null;
    }
    if (
      payload === null ||
      typeof payload !== "object" ||
      payload.v !== 1 ||
      typeof payload.t !== "string" ||
      typeof payload.k !== "string" ||
      typeof payload.e !== "number"
    ) {
      return null;
    }
    const secret = await this.deps.existingSecret(payload.t);
    if (secret === null) return null;
    const expected = Buffer.from(macWith(secret, body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    if (payload.e * 1000 <= this.deps.clock.now()) return null;
    return { tenant: payload.t, taskId: payload.k, expires: payload.e };
  }
}

/** A token's MAC, under a key of its own derived from the signing secret. */
function macWith(secret: string, body: string): string {
  const key = createHmac("sha256", secret).update("stackvm stream token v1").digest();
  return createHmac("sha256", key).update(body).digest("base64url");
}

/**
 * How many MCP calls may be in flight at once, per tenant and per server, in
 * this process. The worker has few slots (four locally, shared by every
 * tenant); a server that answers slowly would hold one per call for as long as
 * it likes, and a tenant with many parallel steps would hold them all. A call
 * over a limit does not wait in a slot: it is put back on the queue
 * (`RetryableError` `mcp_busy`, which the step's retry delay spaces out), and
 * the slot goes to the next message, another tenant's as likely as not.
 */
import { RetryableError } from "../../errors";

/** The limits; both count calls and background relists of this process. */
export interface McpCallLimits {
  /** Calls in flight for one tenant, all its servers together. */
  perTenant: number;
  /** Calls in flight to one server of one namespace. */
  perServer: number;
}

/** Half the local worker's four slots for one tenant, and as many for one server. */
export const DEFAULT_MCP_CALL_LIMITS: McpCallLimits = { perTenant: 2, perServer: 2 };

/** Counts MCP calls in flight by tenant and by server. */
export class McpCallLimiter {
  readonly #inFlight = new Map<string, number>();

  constructor(readonly limits: McpCallLimits = DEFAULT_MCP_CALL_LIMITS) {}

  /**
   * Takes a place for one call, or null when the tenant or the server is at its limit.
   *
   * @example
   * const release = limiter.tryAcquire("t1", "t1|default|weather");
   * if (release) try { await call(); } finally { release(); }
   */
  tryAcquire(tenant: string, server: string): (() => void) | null {
    const tenantKey = `tenant:${tenant}`;
    const serverKey = `server:${server}`;
    if ((this.#inFlight.get(tenantKey) ?? 0) >= this.limits.perTenant) return null;
    if ((this.#inFlight.get(serverKey) ?? 0) >= this.limits.perServer) return null;
    this.#add(tenantKey, 1);
    this.#add(serverKey, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#add(tenantKey, -1);
      this.#add(serverKey, -1);
    };
  }

  /** Like `tryAcquire`, but a call over a limit throws `mcp_busy` so that the step is tried later. */
  acquire(tenant: string, server: string, label: string): () => void {
    const release = this.tryAcquire(tenant, server);
    if (release) return release;
    throw new RetryableError(
      "mcp_busy",
      `the MCP server '${label}' already has ${this.limits.perServer} calls in flight, or this tenant ${this.limits.perTenant}: the step is tried again shortly`,
    );
  }

  #add(key: string, delta: number): void {
    const next = (this.#inFlight.get(key) ?? 0) + delta;
    if (next <= 0) this.#inFlight.delete(key);
    else this.#inFlight.set(key, next);
  }
}

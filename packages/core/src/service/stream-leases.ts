/**
 * Open streams per tenant (`max_open_streams`): the events stream and chat
 * completions follow a task for as long as it runs, up to the API's timeout
 * (5 minutes on AWS, one Lambda invocation each). The request rate limit only
 * counts their opening, so without this a tenant at 100 requests a second could
 * hold thousands of invocations at once, the account's whole concurrency, and
 * every other tenant's requests and steps would be throttled with it.
 *
 * Each open stream holds a lease in the store, `T#{tenant}#STREAMS` /
 * `S#{id}`, that lives `LEASE_MS` and is renewed every `RENEW_MS` while the
 * stream runs, then deleted when it ends; a stream whose process died stops
 * counting when its lease runs out. Opening writes the lease first and counts
 * the live ones after: two streams opened at the same moment both see each
 * other, so the limit holds even then (at worst both are refused, and the
 * client's retry gets through).
 */
import { randomUUID } from "node:crypto";
import { RateLimitedError } from "../errors";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { StreamLeaseStore } from "../store/stream-lease-store";

/** How long a lease holds without renewal: a dead stream's slot frees within this. */
export const LEASE_MS = 60_000;
/** How often a running stream renews its lease. */
export const RENEW_MS = 20_000;

/** One open stream's hold on its tenant's limit. */
export interface StreamLease {
  /** Ends the hold (idempotent): the stream's slot is free at once. */
  close(): Promise<void>;
}

export interface StreamLeasesDeps {
  leases: StreamLeaseStore;
  clock: Clock;
  /** The tenant's `max_open_streams`. */
  limit: (tenant: string) => Promise<number>;
  log?: Log;
}

/**
 * @example
 * const lease = await leases.open("acme"); // RateLimitedError too_many_streams past the limit
 * try { ... stream ... } finally { await lease.close(); }
 */
export class StreamLeases {
  constructor(private readonly deps: StreamLeasesDeps) {}

  /** Takes a slot for one stream of `tenant`, or throws 429 `too_many_streams`. */
  async open(tenant: string): Promise<StreamLease> {
    const limit = await this.deps.limit(tenant);
    const id = randomUUID();
    await this.write(tenant, id);
    const open = await this.count(tenant);
    if (open > limit) {
      await this.deps.leases.delete(tenant, id).catch(() => undefined);
      throw new RateLimitedError(
        `this tenant already has ${limit} event streams, long polls (?wait=) or chat completions open (max_open_streams): close one, or wait for one to end, and try again (the operator can raise max_open_streams)`,
        Math.ceil(RENEW_MS / 1000),
        "too_many_streams",
      );
    }
    // Renewed in the background; a failed renewal is logged and tried again at the next.
    const timer = setInterval(() => {
      this.write(tenant, id).catch((error: unknown) =>
        this.deps.log?.warn("stream lease not renewed", {
          tenant_id: tenant,
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    }, RENEW_MS);
    timer.unref?.();
    let closed = false;
    return {
      close: async () => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        await this.deps.leases.delete(tenant, id).catch(() => undefined);
      },
    };
  }

  /** The tenant's streams open now (leases not yet run out). */
  async count(tenant: string): Promise<number> {
    return this.deps.leases.countOpen(tenant, this.deps.clock.now());
  }

  private async write(tenant: string, id: string): Promise<void> {
    await this.deps.leases.put(tenant, id, this.deps.clock.now() + LEASE_MS);
  }
}

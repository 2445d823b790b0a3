/**
 * Expiry of LLM traces in the local stack. On AWS the bucket's lifecycle rule
 * deletes them (infra/storage.ts); the S3 emulator has no lifecycle rules, so
 * here the traces older than `STACKVM_LLM_TRACE_RETENTION_DAYS` are deleted at
 * start and then every hour. The API answers 404 for an expired trace either
 * way, whether or not its bytes are gone yet.
 */
import { type Blobs, type Clock, LLM_TRACE_ROOT, type Log } from "@stackvm/core";

/** How often the local stack looks for expired traces. */
export const TRACE_EXPIRY_INTERVAL_MS = 3_600_000;

export interface TraceExpiry {
  /** Deletes the traces past the retention now; answers how many went. */
  runOnce(): Promise<number>;
  stop(): void;
}

export function startTraceExpiry(options: {
  blobs: Blobs;
  /** 0 keeps none: every trace left from an earlier setting goes. */
  retentionDays: number;
  clock: Clock;
  log: Log;
  intervalMs?: number;
}): TraceExpiry {
  const runOnce = async () => {
    const before = new Date(options.clock.now() - options.retentionDays * 86_400_000);
    const deleted = await options.blobs.deleteOlderThan(LLM_TRACE_ROOT, before);
    if (deleted > 0) options.log.info("expired LLM traces deleted", { deleted });
    return deleted;
  };
  const run = () => {
    runOnce().catch((error: unknown) =>
      options.log.error("deleting expired LLM traces failed", { error: String(error) }),
    );
  };
  run();
  const timer = setInterval(run, options.intervalMs ?? TRACE_EXPIRY_INTERVAL_MS);
  timer.unref();
  return { runOnce, stop: () => clearInterval(timer) };
}

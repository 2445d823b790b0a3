/**
 * What a tenant reads of its own usage (`GET /v1/usage`): for each month, what
 * its budget counted (every LLM call as it was made on a metered tenant, or as
 * its run ended, and a document's ingest) and, by namespace, the runs that
 * ended in the month with their steps, LLM calls, tokens and cost. A run counts
 * in the month it ended, once (`QuotaService.recordUsage` marks it), so a run
 * still going shows in the namespaces when it ends; on a tenant with a monthly
 * budget its calls are in `tokens` and `cost_usd` already.
 */
import type { NamespaceUsage, QuotaStore } from "../store/quota-store";

/** The most months one report reads. */
export const MAX_USAGE_MONTHS = 36;

/** One month of the report. */
export interface UsageMonth {
  /** `2026-03` (UTC). */
  month: string;
  /** What the monthly budget counted: input plus output tokens. */
  tokens: number;
  cost_usd: number;
  /** The runs that ended in the month, summed over its namespaces. */
  runs: Omit<NamespaceUsage, "namespace">;
  /** By namespace, by name. */
  namespaces: NamespaceUsage[];
}

/** The tenant's months, newest first; the current month is always there, empty or not. */
export interface UsageReport {
  tenant: string;
  months: UsageMonth[];
}

const NO_RUNS = {
  runs: 0,
  steps: 0,
  llm_calls: 0,
  input_tokens: 0,
  output_tokens: 0,
  cost_usd: 0,
};

/** The `count` months ending with the one `now` falls in, newest first. */
export function monthsBack(now: number, count: number): string[] {
  const at = new Date(now);
  const months: string[] = [];
  for (let back = 0; back < count; back++) {
    const first = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - back, 1));
    months.push(first.toISOString().slice(0, 7));
  }
  return months;
}

/**
 * Reads the tenant's last `count` months (1 to `MAX_USAGE_MONTHS`) in one query.
 *
 * @example
 * const report = await usageReport(quotaStore, "acme", Date.now(), 12);
 * report.months[0].namespaces; // this month's namespaces
 */
export async function usageReport(
  store: QuotaStore,
  tenant: string,
  now: number,
  count: number,
): Promise<UsageReport> {
  const wanted = monthsBack(now, Math.min(Math.max(1, Math.trunc(count)), MAX_USAGE_MONTHS));
  const stored = await store.listUsage(tenant, wanted.at(-1) as string, wanted[0] as string);
  const byMonth = new Map(stored.map((m) => [m.month, m]));
  const months: UsageMonth[] = [];
  for (const month of wanted) {
    const found = byMonth.get(month);
    if (!found && month !== wanted[0]) continue;
    const namespaces = (found?.namespaces ?? []).sort((a, b) =>
      a.namespace < b.namespace ? -1 : 1,
    );
    const runs = { ...NO_RUNS };
    for (const line of namespaces) {
      for (const field of Object.keys(NO_RUNS) as Array<keyof typeof NO_RUNS>)
        runs[field] += line[field];
    }
    months.push({
      month,
      tokens: found?.tokens ?? 0,
      cost_usd: found?.cost_usd ?? 0,
      runs,
      namespaces,
    });
  }
  return { tenant, months };
}

/**
 * The stored side of a tenant's quotas: its overrides (`QUOTAS`), its request
 * rate windows (`RATE`, `RATE#BAD_SIGNATURE`), its month's usage
 * (`USAGE#{month}`), what each branch's calls charged to the month as they
 * were made (`METERED#{task}#{branch}`) and the bytes of its files (`FILEBYTES`). The conditions that make counting safe
 * live here; what they mean lives in `service/quotas.ts`.
 */
import { isErrorKind } from "../errors";
import type { Usage } from "../model";
import type { Changes, Condition, Item, ItemStore } from "../ports/item-store";
import {
  badSignatureRateKey,
  branchKey,
  fileBytesKey,
  meteredKey,
  NAMESPACE_USAGE_INFIX,
  namespaceUsageKey,
  quotasKey,
  requestRateKey,
  USAGE_PREFIX,
  usageKey,
} from "./keys";
import { queryAll } from "./query-all";
import type { BranchRecord } from "./records";

/** Which one-second window a count goes to. */
export type RateWindowKind = "requests" | "bad_signatures";

/** Tokens and dollars, as a month or a meter counts them. */
export interface Spent {
  tokens: number;
  cost_usd: number;
}

/** What the runs of one namespace that ended in a month counted. */
export interface NamespaceUsage extends Usage {
  namespace: string;
  /** Runs that ended: a task's main branch, a fork, a retry, an evaluation round. */
  runs: number;
}

/** A month as stored: the budget's count (every call, ingest included) and the namespaces' lines. */
export interface StoredMonth extends Spent {
  month: string;
  namespaces: NamespaceUsage[];
}

const countOf = (value: unknown): number => (typeof value === "number" ? value : 0);

const rateKey = (tenant: string, kind: RateWindowKind) =>
  kind === "requests" ? requestRateKey(tenant) : badSignatureRateKey(tenant);

const spentOf = (item: Item | null): Spent => ({
  tokens: typeof item?.tokens === "number" ? item.tokens : 0,
  cost_usd: typeof item?.cost_usd === "number" ? item.cost_usd : 0,
});

export class QuotaStore {
  constructor(private readonly items: ItemStore) {}

  /** The tenant's stored overrides, unparsed; null when it has none. */
  async getOverrides(tenant: string): Promise<unknown> {
    const item = await this.items.get(quotasKey(tenant));
    return item ? (item.overrides ?? {}) : null;
  }

  async putOverrides(tenant: string, overrides: unknown, updatedAt: string): Promise<void> {
    await this.items.put({
      ...quotasKey(tenant),
      tenant_id: tenant,
      overrides,
      updated_at: updatedAt,
    });
  }

  /**
   * Counts one in the window if it is still `window` and holds less than
   * `limit`; false when it is not (another window, or full).
   */
  async countInWindow(
    tenant: string,
    kind: RateWindowKind,
    window: number,
    limit: number,
  ): Promise<boolean> {
    const condition = { equals: { window }, below: { count: limit } };
    return this.#conditional(() =>
      this.items.update(rateKey(tenant, kind), { add: [[["count"], 1]] }, condition),
    );
  }

  /** The window as stored: its second and its count, or null when never opened. */
  async readWindow(
    tenant: string,
    kind: RateWindowKind,
  ): Promise<{ window: number | null; count: number | null }> {
    const item = await this.items.get(rateKey(tenant, kind));
    return {
      window: typeof item?.window === "number" ? item.window : null,
      count: typeof item?.count === "number" ? item.count : null,
    };
  }

  /**
   * Opens `window` with a count of one, if the stored window is still `previous`
   * (null: none); false when another request changed it since.
   */
  async openWindow(
    tenant: string,
    kind: RateWindowKind,
    window: number,
    previous: number | null,
  ): Promise<boolean> {
    const condition: Condition =
      previous === null ? { exists: false } : { equals: { window: previous } };
    const item = { ...rateKey(tenant, kind), tenant_id: tenant, window, count: 1 };
    return this.#conditional(() => this.items.put(item, condition));
  }

  /**
   * Counts `bytes` more of the tenant's stored files, if the count stays at
   * most `limit` (null: no limit), in one conditional update; false when it
   * would not.
   */
  async addFileBytes(tenant: string, bytes: number, limit: number | null): Promise<boolean> {
    if (limit !== null && bytes > limit) return false;
    const changes: Changes = { set: [[["tenant_id"], tenant]], add: [[["bytes"], bytes]] };
    return this.#conditional(() =>
      limit === null
        ? this.items.update(fileBytesKey(tenant), changes)
        : this.items.update(fileBytesKey(tenant), changes, { below: { bytes: limit - bytes + 1 } }),
    );
  }

  /** Counts `bytes` fewer of the tenant's stored files (a file deleted, or a counted upload refused). */
  async removeFileBytes(tenant: string, bytes: number): Promise<void> {
    await this.items.update(fileBytesKey(tenant), { add: [[["bytes"], -bytes]] });
  }

  /** The bytes of the tenant's stored files, as counted. */
  async fileBytes(tenant: string): Promise<number> {
    return countOf((await this.items.get(fileBytesKey(tenant)))?.bytes);
  }

  async getUsage(tenant: string, month: string): Promise<Spent> {
    return spentOf(await this.items.get(usageKey(tenant, month)));
  }

  async addUsage(tenant: string, month: string, spent: Spent): Promise<void> {
    await this.items.update(usageKey(tenant, month), addSpent(tenant, spent));
  }

  /** Adds an ended run's counts to its namespace's line of the month. */
  async addNamespaceUsage(
    tenant: string,
    month: string,
    namespace: string,
    usage: Usage,
  ): Promise<void> {
    await this.items.update(namespaceUsageKey(tenant, month, namespace), {
      set: [[["tenant_id"], tenant]],
      add: [
        [["runs"], 1],
        [["steps"], usage.steps],
        [["llm_calls"], usage.llm_calls],
        [["input_tokens"], usage.input_tokens],
        [["output_tokens"], usage.output_tokens],
        [["cost_usd"], usage.cost_usd],
      ],
    });
  }

  /**
   * The tenant's months from `first` to `last` (`2026-03`), as stored: each
   * month's budget count and its namespaces' lines. A month with neither is absent.
   */
  async listUsage(tenant: string, first: string, last: string): Promise<StoredMonth[]> {
    const months = new Map<string, StoredMonth>();
    const monthOf = (month: string) => {
      let found = months.get(month);
      if (!found) {
        found = { month, tokens: 0, cost_usd: 0, namespaces: [] };
        months.set(month, found);
      }
      return found;
    };
    const query = {
      pk: usageKey(tenant, first).pk,
      between: [`${USAGE_PREFIX}${first}`, `${USAGE_PREFIX}${last}~`] as [string, string],
      limit: 100,
    };
    for await (const item of queryAll(this.items, query)) {
      const rest = item.sk.slice(USAGE_PREFIX.length);
      const at = rest.indexOf(NAMESPACE_USAGE_INFIX);
      if (at === -1) {
        Object.assign(monthOf(rest), spentOf(item));
        continue;
      }
      monthOf(rest.slice(0, at)).namespaces.push({
        namespace: rest.slice(at + NAMESPACE_USAGE_INFIX.length),
        runs: countOf(item.runs),
        steps: countOf(item.steps),
        llm_calls: countOf(item.llm_calls),
        input_tokens: countOf(item.input_tokens),
        output_tokens: countOf(item.output_tokens),
        cost_usd: countOf(item.cost_usd),
      });
    }
    return [...months.values()];
  }

  /**
   * Marks the branch's usage counted for `month`, once: the branch as marked, or
   * null when it was marked already (or is gone).
   */
  async markUsageCounted(
    tenant: string,
    taskId: string,
    branch: string,
    month: string,
  ): Promise<BranchRecord | null> {
    return (await this.items
      .update(
        branchKey(tenant, taskId, branch),
        { set: [[["usage_counted"], month]] },
        { exists: true, equals: { usage_counted: null } },
      )
      .catch((error: unknown) => {
        if (isErrorKind(error, "conflict")) return null;
        throw error;
      })) as unknown as BranchRecord | null;
  }

  /** What a branch's meter says was charged already; zero when it has none. */
  async getMetered(tenant: string, taskId: string, branch: string): Promise<Spent> {
    return spentOf(await this.items.get(meteredKey(tenant, taskId, branch)));
  }

  async addMetered(tenant: string, taskId: string, branch: string, spent: Spent): Promise<void> {
    await this.items.update(meteredKey(tenant, taskId, branch), addSpent(tenant, spent));
  }

  async deleteMetered(tenant: string, taskId: string, branch: string): Promise<void> {
    await this.items.delete(meteredKey(tenant, taskId, branch));
  }

  /** Runs a conditional write: true when it held, false on a failed condition. */
  async #conditional(write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      return false;
    }
  }
}

function addSpent(tenant: string, spent: Spent) {
  return {
    set: [[["tenant_id"], tenant]] as Array<[string[], unknown]>,
    add: [
      [["tokens"], spent.tokens],
      [["cost_usd"], spent.cost_usd],
    ] as Array<[string[], number]>,
  };
}

/**
 * Quotas per tenant: requests per second on the API, running tasks at once, open
 * event streams and chat completions (`stream-leases.ts`), and a monthly token
 * and cost budget. Defaults come from configuration; the operator
 * overrides them per tenant (`PUT /v1/admin/tenants/{tenant}/quotas`).
 *
 * Rate limit: a fixed one-second window counted in the store, one conditional
 * update per request (`add count` if `window` is this second and `count` is below
 * the limit). Not in memory per instance: on Lambda every concurrent request may
 * be served by its own instance, so a per-instance bucket would let a tenant have
 * N times its limit for N instances, and the instances come and go. A fixed window
 * allows up to twice the limit across a second boundary, which is what a "per
 * second" limit is expected to tolerate, and it costs no read on the common path.
 *
 * Running tasks: see `running-slots.ts`. Budget: a task may not start when the
 * month's budget is spent (429 until the month ends), and a task that starts gets
 * at most what is left as its own token and cost budget, which the LLM layer
 * enforces before each call; a retry or a fork is refused and capped the same
 * way. Each LLM call of a step also checks the month before it and charges it
 * after (`month-meter.ts`), so runs side by side stop within one call of the
 * month's end; a waiting task of a spent month stays queued (`RunningSlots`).
 * A run's usage not charged that way reaches the month when it ends. A
 * document's ingest (its graph calls and embeddings) is checked and counted the
 * same way.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import { isErrorKind, RateLimitedError, StackVMError } from "../errors";
import type { BudgetLeft } from "../llm/types";
import { loadOnce } from "../load-once";
import type { SlotWait } from "../model";
import { ZERO_USAGE } from "../model-values";
import type { Clock } from "../ports/clock";
import type { QuotaStore, RateWindowKind } from "../store/quota-store";
import type { TaskStore } from "../store/task-store";
import type { BranchEndHook, TaskEndHook } from "./lifecycle";
import type { RunningSlots } from "./running-slots";
import type { UsageReport } from "./usage-report";

// Only the API's `GET /v1/usage` reads it: not at the worker's start.
const reports = loadOnce(() => import("./usage-report"));

// Built on first use: a step reads them only for a tenant with overrides stored.
export const TenantQuotas = buildOnce(() =>
  z
    .object({
      requests_per_second: z.number().check(z.int(), z.gte(1), z.lte(100_000)),
      max_running_tasks: z.number().check(z.int(), z.gte(1), z.lte(1_000)),
      /** Event streams and chat completions open at once (`stream-leases.ts`). */
      max_open_streams: z.number().check(z.int(), z.gte(1), z.lte(10_000)),
      /** Input plus output tokens per calendar month (UTC); null: no limit. */
      monthly_token_budget: z.number().check(z.int(), z.gte(0)).nullable(),
      /** LLM cost per calendar month (UTC), in US dollars; null: no limit. */
      monthly_cost_budget_usd: z.number().check(z.gte(0)).nullable(),
      /** Finished tasks are deleted this many days after they end (`retention.ts`); null: kept. */
      retention_days: z.number().check(z.int(), z.gte(1), z.lte(36_500)).nullable(),
      /** Bytes of uploaded files (`POST /v1/files`) the tenant may keep at once; null: no limit. */
      file_storage_bytes: z.number().check(z.int(), z.gte(0)).nullable(),
    })
    .strict(),
);
export type TenantQuotas = z.infer<ReturnType<typeof TenantQuotas>>;

/** What the operator sets for one tenant; an absent field takes the default. */
export const QuotaOverrides = buildOnce(() => TenantQuotas().partial().strict());
export type QuotaOverrides = z.infer<ReturnType<typeof QuotaOverrides>>;

export const DEFAULT_QUOTAS: TenantQuotas = {
  requests_per_second: 100,
  max_running_tasks: 10,
  max_open_streams: 50,
  monthly_token_budget: null,
  monthly_cost_budget_usd: null,
  retention_days: null,
  file_storage_bytes: 10 * 1024 ** 3,
};

/** The month's usage of a tenant. */
export interface MonthUsage {
  month: string;
  tokens: number;
  cost_usd: number;
}

/** What the operator sees of a tenant (`/v1/admin/tenants/{tenant}/quotas`). */
export interface QuotaReport {
  tenant: string;
  /** The limits in force: the overrides over the defaults. */
  quotas: TenantQuotas;
  overrides: QuotaOverrides;
  /** The month's usage, and the bytes its uploaded files hold now. */
  usage: MonthUsage & { file_bytes: number };
}

export interface QuotaServiceDeps {
  quotaStore: QuotaStore;
  store: TaskStore;
  clock: Clock;
  defaults: TenantQuotas;
  /**
   * How long an instance keeps a tenant's limits before reading them again. An
   * override reaches every instance within this time (and at once on the one
   * that wrote it).
   */
  cacheMs?: number;
}

export class QuotaService {
  readonly #cache = new Map<string, { quotas: TenantQuotas; until: number }>();

  constructor(private readonly deps: QuotaServiceDeps) {}

  /** The tenant's limits: its overrides over the defaults. */
  async limits(tenant: string): Promise<TenantQuotas> {
    const now = this.deps.clock.now();
    const cached = this.#cache.get(tenant);
    if (cached && cached.until > now) return cached.quotas;
    return this.#remember(tenant, await this.overrides(tenant));
  }

  /** Caches and answers the limits from overrides just read or written. */
  #remember(tenant: string, overrides: QuotaOverrides): TenantQuotas {
    const quotas = { ...this.deps.defaults, ...overrides };
    const until = this.deps.clock.now() + (this.deps.cacheMs ?? 10_000);
    this.#cache.set(tenant, { quotas, until });
    return quotas;
  }

  async overrides(tenant: string): Promise<QuotaOverrides> {
    const stored = await this.deps.quotaStore.getOverrides(tenant);
    return stored === null ? {} : QuotaOverrides().parse(stored);
  }

  /** Replaces the tenant's overrides; answers the limits in force. */
  async setOverrides(tenant: string, overrides: QuotaOverrides): Promise<TenantQuotas> {
    const parsed = QuotaOverrides().parse(overrides);
    const updatedAt = new Date(this.deps.clock.now()).toISOString();
    await this.deps.quotaStore.putOverrides(tenant, parsed, updatedAt);
    return this.#remember(tenant, parsed);
  }

  /**
   * The tenant's limits in force, its overrides and the month's usage: one read
   * of the overrides (which also refreshes the cached limits) beside one of the
   * usage. `written`: the overrides `setOverrides` just wrote, which spares that read.
   *
   * @example
   * await quotas.setOverrides("acme", overrides);
   * const report = await quotas.report("acme", overrides);
   */
  async report(tenant: string, written?: QuotaOverrides): Promise<QuotaReport> {
    const [overrides, usage, fileBytes] = await Promise.all([
      written ? QuotaOverrides().parse(written) : this.overrides(tenant),
      this.usage(tenant),
      this.deps.quotaStore.fileBytes(tenant),
    ]);
    const quotas = this.#remember(tenant, overrides);
    return { tenant, quotas, overrides, usage: { ...usage, file_bytes: fileBytes } };
  }

  /**
   * Counts `bytes` of a file the tenant is storing; 409 `file_storage_full`
   * when its files would then hold more than `file_storage_bytes`, and
   * nothing is counted.
   */
  async reserveFileBytes(tenant: string, bytes: number): Promise<void> {
    const limit = (await this.limits(tenant)).file_storage_bytes;
    if (await this.deps.quotaStore.addFileBytes(tenant, bytes, limit)) return;
    const used = await this.deps.quotaStore.fileBytes(tenant);
    throw new StackVMError(
      "conflict",
      "file_storage_full",
      `this file (${bytes} bytes) would take the tenant's files past their ${limit} bytes (${used} used): delete files you no longer need (DELETE /v1/files/{id}), or ask the operator to raise file_storage_bytes`,
    );
  }

  /** Counts `bytes` fewer of the tenant's files: one was deleted, or a counted store did not finish. */
  releaseFileBytes(tenant: string, bytes: number): Promise<void> {
    return this.deps.quotaStore.removeFileBytes(tenant, bytes);
  }

  /** Counts one API request; `RateLimitedError` (429 with Retry-After) past the limit. */
  async takeRequest(tenant: string): Promise<void> {
    const limit = (await this.limits(tenant)).requests_per_second;
    await this.#take(
      tenant,
      "requests",
      limit,
      (retryAfter) =>
        new RateLimitedError(
          `more than ${limit} requests per second for this tenant: wait for Retry-After, then send fewer requests at once (the operator can raise requests_per_second)`,
          retryAfter,
        ),
    );
  }

  /**
   * Counts one delivery to a trigger of the tenant whose signature did not verify,
   * in a window of its own: a flood of forged deliveries, which anyone who knows a
   * trigger's URL can send, never spends the tenant's request rate, and is itself
   * refused with 429 past `requests_per_second` in one second.
   */
  async takeBadSignature(tenant: string): Promise<void> {
    const limit = (await this.limits(tenant)).requests_per_second;
    await this.#take(
      tenant,
      "bad_signatures",
      limit,
      (retryAfter) =>
        new RateLimitedError(
          `more than ${limit} deliveries with a bad signature per second to this tenant's triggers: check the secret the sender signs with`,
          retryAfter,
          "bad_signatures_rate_limited",
        ),
    );
  }

  /**
   * One count in the fixed one-second window of `kind`; throws `refused(seconds
   * left in the window)` when the window already holds `limit`.
   */
  async #take(
    tenant: string,
    kind: RateWindowKind,
    limit: number,
    refused: (retryAfterSeconds: number) => RateLimitedError,
  ): Promise<void> {
    const now = this.deps.clock.now();
    let window = Math.floor(now / 1000);
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await this.deps.quotaStore.countInWindow(tenant, kind, window, limit)) return;
      const { window: current, count } = await this.deps.quotaStore.readWindow(tenant, kind);
      if (current === window) {
        if (count !== null && count >= limit) {
          throw refused(Math.max(0.001, (1000 - (now % 1000)) / 1000));
        }
        continue; // another request changed the count between the two calls
      }
      if (current !== null && current > window) {
        // Another instance's clock is ahead: count this request in its window.
        window = current;
        continue;
      }
      // Open this second's window, if no other request did since the read.
      if (await this.deps.quotaStore.openWindow(tenant, kind, window, current)) return;
    }
    // Lost every race to requests of the same instant: let it through rather than
    // refuse a request the limit allows.
  }

  /** The month (UTC) a time falls in: `2026-03`. */
  month(now = this.deps.clock.now()): string {
    return new Date(now).toISOString().slice(0, 7);
  }

  async usage(tenant: string): Promise<MonthUsage> {
    const month = this.month();
    return { month, ...(await this.deps.quotaStore.getUsage(tenant, month)) };
  }

  /** The tenant's last `months` months, this one first (`GET /v1/usage`). */
  async history(tenant: string, months: number): Promise<UsageReport> {
    const { usageReport } = await reports();
    return usageReport(this.deps.quotaStore, tenant, this.deps.clock.now(), months);
  }

  /**
   * What a new task may spend at most from the month's budget;
   * `RateLimitedError` (`monthly_budget_exhausted`) when nothing is left.
   */
  async budgetLeft(tenant: string): Promise<BudgetLeft> {
    const limits = await this.limits(tenant);
    if (limits.monthly_token_budget === null && limits.monthly_cost_budget_usd === null) return {};
    const used = await this.usage(tenant);
    const left: BudgetLeft = {};
    if (limits.monthly_token_budget !== null)
      left.tokens = limits.monthly_token_budget - used.tokens;
    if (limits.monthly_cost_budget_usd !== null) {
      left.costUsd = limits.monthly_cost_budget_usd - used.cost_usd;
    }
    if ((left.tokens ?? 1) <= 0 || (left.costUsd ?? 1) <= 0) {
      const now = this.deps.clock.now();
      const d = new Date(now);
      const nextMonth = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
      throw new RateLimitedError(
        `the monthly budget of this tenant is spent (${used.tokens} tokens, $${used.cost_usd.toFixed(4)} in ${used.month}): tasks start again next month, or when the operator raises monthly_token_budget / monthly_cost_budget_usd`,
        Math.ceil((nextMonth - now) / 1000),
        "monthly_budget_exhausted",
      );
    }
    return left;
  }

  /** Whether the tenant's month is spent (a waiting task then stays queued). */
  async monthSpent(tenant: string): Promise<boolean> {
    try {
      await this.budgetLeft(tenant);
      return false;
    } catch (error) {
      if (isErrorKind(error, "rate_limited")) return true;
      throw error;
    }
  }

  /**
   * Adds an ended branch's usage to its month, once: a marker on the branch
   * record (set on condition it is absent) makes a repeated hook count nothing.
   * Every branch counts its own steps (a fork starts from zero usage), so every
   * run counts: `main`, a fork, a retry, an evaluation round. A crash between
   * the marker and the addition loses that branch's count, which errs on the
   * tenant's side.
   */
  async recordUsage(tenant: string, taskId: string, branch: string): Promise<void> {
    const month = this.month();
    // The marker's update answers the branch record: no second read.
    const counted = await this.deps.quotaStore.markUsageCounted(tenant, taskId, branch, month);
    if (!counted) return;
    const usage = counted.usage ?? ZERO_USAGE;
    // What the branch's calls charged as they were made (`month-meter.ts`) is counted already.
    const metered = await this.deps.quotaStore.getMetered(tenant, taskId, branch);
    const tokens = Math.max(0, usage.input_tokens + usage.output_tokens - metered.tokens);
    const cost = Math.max(0, usage.cost_usd - metered.cost_usd);
    if (tokens > 0 || cost > 0) await this.addToMonth(tenant, { tokens, cost_usd: cost }, month);
    // The tenant's report by namespace (`usage-report.ts`) counts the whole run, metered or not.
    const namespace = counted.config?.namespace?.name ?? "default";
    await this.deps.quotaStore.addNamespaceUsage(tenant, month, namespace, usage);
    if (metered.tokens > 0 || metered.cost_usd > 0) {
      await this.deps.quotaStore.deleteMetered(tenant, taskId, branch);
    }
  }

  /** Adds spending outside tasks (a document's ingest) to the month. */
  async addToMonth(
    tenant: string,
    usage: { tokens: number; cost_usd: number },
    month = this.month(),
  ): Promise<void> {
    await this.deps.quotaStore.addUsage(tenant, month, usage);
  }
}

/** What `TaskService` asks before a task starts (see `running-slots.ts` for the slots). */
export interface TaskAdmission {
  /** What the task may spend; throws `RateLimitedError` when the month's budget is spent. */
  budgetLeft(tenant: string): Promise<BudgetLeft>;
  /** Claims a running slot; false: the task is written `queued` and waits. */
  claim(tenant: string, taskId: string): Promise<boolean>;
  /**
   * Lists the task as waiting: its branch (`main` for a new task, the new branch
   * of a retry) is written `queued`, not enqueued.
   */
  wait(tenant: string, taskId: string, since: string, branch?: string): Promise<void>;
  /** Frees the task's slot (a start undone), then starts waiting tasks that now fit. */
  release(tenant: string, taskId: string): Promise<void>;
  /** The task's place in line for a slot; null when it waits for none. */
  position?(tenant: string, taskId: string): Promise<SlotWait | null>;
  /** The places in line of all the tenant's waiting tasks, in one read of the line. */
  positions?(tenant: string): Promise<Map<string, SlotWait>>;
  /** Counts a branch's usage for the month, once (before it is deleted unfinished). */
  countUsage?(tenant: string, taskId: string, branch: string): Promise<void>;
}

/** The admission of new tasks from the quotas and the slots. */
export function taskAdmission(quotas: QuotaService, slots: RunningSlots): TaskAdmission {
  return {
    budgetLeft: (tenant) => quotas.budgetLeft(tenant),
    claim: (tenant, taskId) => slots.claim(tenant, taskId),
    wait: (tenant, taskId, since, branch) => slots.wait(tenant, taskId, since, branch),
    release: (tenant, taskId) => slots.release(tenant, taskId),
    position: (tenant, taskId) => slots.position(tenant, taskId),
    positions: (tenant) => slots.positions(tenant),
    countUsage: (tenant, taskId, branch) => quotas.recordUsage(tenant, taskId, branch),
  };
}

/**
 * The hook of quotas that the lifecycle runs for every branch that ends (a fork
 * or a retry of a task that ended before included): its usage counts for the month.
 */
export function quotaBranchEndHook(quotas: QuotaService): BranchEndHook {
  return (branch) => quotas.recordUsage(branch.tenant_id, branch.task_id, branch.name);
}

/**
 * The terminal hook of quotas, which the lifecycle runs when a task ended (its
 * record took a terminal status from its result branch): its slot is freed,
 * which starts the oldest waiting task.
 */
export function quotaTerminalHook(slots: RunningSlots): TaskEndHook {
  return async (_branch, task) => {
    await slots.release(task.tenant_id, task.task_id);
  };
}

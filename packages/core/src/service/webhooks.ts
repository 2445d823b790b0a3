/**
 * Outgoing webhooks: when a task with `webhook_url` reaches a terminal status, one
 * signed `POST {"type": "task.completed" | "task.failed" | "task.cancelled",
 * "data": Task}` (Standard Webhooks headers, the tenant's signing secret).
 *
 * At least once, never lost: the terminal hook writes the delivery on the task
 * (`WH#{webhook_id}` in its partition, with the body to send) and enqueues a
 * `WebhookMessage`; the worker makes one attempt per receive. A failed attempt
 * makes the message visible again after an exponential backoff (`retryAfter`:
 * FIFO queues have no per-message delay) and the worker reports it failed, so a
 * dead worker only costs a receive. Every attempt is recorded on the delivery and
 * shown on the task (`GET /v1/tasks/{id}` → `webhook.deliveries`).
 *
 * The `webhook-id` is derived from (task, branch, head, status), so a terminal hook
 * that runs twice writes and enqueues the same delivery, and every attempt of a
 * delivery carries the same id and body: receivers deduplicate on it.
 */
import { digest } from "../ids";
import type { WebhookDelivery } from "../model";
import { type GuardedFetchOptions, guardedFetch } from "../net/guarded-fetch";
import type { OutboundPolicy } from "../net/outbound-policy";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { Queue } from "../ports/queue";
import type { BranchRecord, TaskRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import type { DeliveryRecord, WebhookStore } from "../store/webhook-store";
import type { WebhookMessage } from "../vm/message";
import { newWebhookSecret, webhookHeaders } from "../webhooks/signature";
import type { TaskEndHook } from "./lifecycle";
import type { Presenter } from "./present";

/**
 * Failures that no retry can mend, which fail the delivery at once: the URL
 * (checked when the task was created) or the address its host name resolves to
 * now is one the outbound guard refuses (a private, link-local or metadata
 * address). Retrying would only wait hours to fail the same way.
 */
const REFUSED_FOR_GOOD = new Set(["bad_webhook_url", "address_forbidden"]);

/** SQS keeps a message hidden for at most 12 hours. */
const MAX_BACKOFF_SECONDS = 12 * 60 * 60;

export interface WebhookServiceDeps {
  webhookStore: WebhookStore;
  /** Reads the task for `task.waiting` (none: no `task.waiting` webhooks). */
  store?: TaskStore;
  queue: Queue;
  clock: Clock;
  presenter: Presenter;
  log: Log;
  /** What receivers may be reached: the operator's open ranges, the stack's own ports. */
  outbound: OutboundPolicy;
  /** The same check as at task creation (`webhookUrlCheck` of the same policy). */
  checkUrl: (url: string) => void;
  /**
   * Attempts per delivery. Keep it at most the queue's `maxReceiveCount`: each
   * attempt is a receive, and the last one records the failure instead of
   * letting the message go to the dead-letter queue.
   */
  maxAttempts: number;
  /** The wait after the first failed attempt; each next one waits 4 times longer. */
  backoffBaseSeconds: number;
  /** How long a receiver may take to answer. */
  timeoutMs: number;
  /** For tests: name resolution that stays on this machine. */
  resolve?: GuardedFetchOptions["resolve"];
}

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /** The tenant's signing secret, or null when it has none yet; never writes. */
  async existingSecret(tenant: string): Promise<string | null> {
    return this.deps.webhookStore.getSecret(tenant);
  }

  /** The tenant's signing secret, made on first use. */
  async secret(tenant: string): Promise<string> {
    const existing = await this.deps.webhookStore.getSecret(tenant);
    if (existing !== null) return existing;
    const createdAt = new Date(this.deps.clock.now()).toISOString();
    return this.deps.webhookStore.createSecret(tenant, newWebhookSecret(), createdAt);
  }

  /** The hook that queues a task's webhook when the task ended (on its result branch). */
  terminalHook(): TaskEndHook {
    return async (branch, task, branches) => {
      if (!task.webhook_url) return;
      const webhookId = `msg_${digest(task.task_id, branch.name, branch.head, task.status)}`;
      const type = `task.${task.status}` as WebhookDelivery["type"];
      const data = await this.deps.presenter.task(task, await branches());
      await this.queueDelivery(task, webhookId, type, { type, data });
    };
  }

  /** Writes a delivery once and enqueues its first attempt. */
  private async queueDelivery(
    task: TaskRecord,
    webhookId: string,
    type: WebhookDelivery["type"],
    body: Record<string, unknown>,
  ): Promise<void> {
    if (!task.webhook_url) return;
    {
      const item: DeliveryRecord = {
        webhook_id: webhookId,
        type,
        url: task.webhook_url,
        body: JSON.stringify(body),
        status: "pending",
        attempts: [],
        created_at: new Date(this.deps.clock.now()).toISOString(),
      };
      // Written once: a repeated hook must not reset the attempts of a delivery under way.
      await this.deps.webhookStore.createDelivery(task.tenant_id, task.task_id, item);
      const message: WebhookMessage = {
        v: 1,
        kind: "webhook",
        tenant_id: task.tenant_id,
        task_id: task.task_id,
        webhook_id: webhookId,
      };
      await this.deps.queue.send(message, {
        groupId: `webhook:${webhookId}`,
        deduplicationId: digest("webhook", webhookId),
      });
    }
  }

  /**
   * Queues `task.waiting` for a branch that waits for an answer: `data` is the
   * task, `resume_url` the single-use URL that answers it (`service/waits.ts`).
   * One delivery per wait (its id is derived from the wait), however often the
   * hook runs.
   */
  async notifyWaiting(branch: BranchRecord, resumeUrl: string): Promise<void> {
    const store = this.deps.store;
    if (!store || !branch.waiting) return;
    const task = await store.getTask(branch.tenant_id, branch.task_id);
    if (!task?.webhook_url) return;
    const webhookId = `msg_${digest(task.task_id, branch.name, branch.waiting.id, "waiting")}`;
    const data = await this.deps.presenter.task(
      task,
      await store.listBranches(task.tenant_id, task.task_id),
    );
    await this.queueDelivery(task, webhookId, "task.waiting", {
      type: "task.waiting",
      data,
      resume_url: resumeUrl,
    });
  }

  /**
   * Makes one attempt (one receive of the message). Answers `retryAfterSeconds`
   * when the receiver failed and attempts are left; the caller then hides the
   * message for that long and reports it failed.
   */
  async deliver(
    message: WebhookMessage,
    receiveCount: number,
  ): Promise<{ retryAfterSeconds?: number }> {
    const { tenant_id: tenant, task_id: taskId, webhook_id: webhookId } = message;
    const item = await this.deps.webhookStore.getDelivery(tenant, taskId, webhookId);
    // Gone with its task, or already done by an earlier receive.
    if (item?.status !== "pending") return {};
    const attempt = item.attempts.length + 1;
    const started = this.deps.clock.now();
    let status: number | null = null;
    let error: string | null = null;
    // A receiver the guard refuses stays refused: no later attempt could connect.
    let refused = false;
    try {
      this.deps.checkUrl(item.url);
      const secret = await this.secret(message.tenant_id);
      const headers = webhookHeaders(
        secret,
        item.webhook_id,
        Math.floor(started / 1000),
        item.body,
      );
      const response = await guardedFetch(
        {
          url: item.url,
          method: "POST",
          headers: { ...headers, "content-type": "application/json", "user-agent": "stackvm/1" },
          body: item.body,
        },
        {
          policy: this.deps.outbound,
          timeoutMs: this.deps.timeoutMs,
          maxRedirects: 0,
          maxResponseBytes: 64 * 1024,
          ...(this.deps.resolve || this.deps.outbound.resolve
            ? { resolve: (this.deps.resolve ?? this.deps.outbound.resolve)! }
            : {}),
        },
      );
      status = response.status;
      if (status < 200 || status > 299) error = `the receiver answered ${status}`;
    } catch (e) {
      error = (e as Error).message;
      refused = REFUSED_FOR_GOOD.has(String((e as { code?: unknown }).code));
    }
    const ok = error === null;
    const last =
      refused || attempt >= this.deps.maxAttempts || receiveCount >= this.deps.maxAttempts;
    const outcome: WebhookDelivery["status"] = ok ? "delivered" : last ? "failed" : "pending";
    const record = {
      attempt,
      at: new Date(started).toISOString(),
      status,
      error,
      duration_ms: this.deps.clock.now() - started,
    };
    const attempts = [...item.attempts, record];
    await this.deps.webhookStore.recordAttempts(tenant, taskId, webhookId, attempts, outcome);
    const log = {
      tenant_id: message.tenant_id,
      task_id: message.task_id,
      webhook_id: message.webhook_id,
      attempt,
      status,
    };
    if (ok) this.deps.log.info("webhook delivered", log);
    else
      this.deps.log.warn(last ? "webhook failed for good" : "webhook attempt failed", {
        ...log,
        error,
      });
    if (outcome !== "pending") return {};
    return {
      retryAfterSeconds: Math.min(
        MAX_BACKOFF_SECONDS,
        this.deps.backoffBaseSeconds * 4 ** (attempt - 1),
      ),
    };
  }

  /** A task's deliveries, oldest first, as the task shows them. */
  async deliveries(tenant: string, taskId: string): Promise<WebhookDelivery[]> {
    return (await this.deps.webhookStore.listDeliveries(tenant, taskId))
      .map((d) => ({
        webhook_id: d.webhook_id,
        type: d.type,
        status: d.status,
        attempts: d.attempts,
        created_at: d.created_at,
      }))
      .sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
  }
}

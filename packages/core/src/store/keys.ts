/**
 * The key layout of the single table: every partition and sort key the system
 * writes is built here, and nowhere else. Every tenant-owned key starts with
 * `T#{tenant}`, so no key of one tenant can address another's item.
 *
 * - `T#{t}` / `NS#{name}`, `KEY#{id}`, `TRIGGER#{id}`, `SCHEDULE#{id}`, `TEMPLATE#{id}`, ...:
 *   small per-tenant collections, one partition per tenant.
 * - `T#{t}#K#{task}` / `TASK`: the task; `B#{name}`: its branches;
 *   `C#{bid}#{depth:08}`: its commits, so that one branch's own commits are one
 *   sorted range and a task's whole history is one partition.
 * - `gsi1`: `T#{t}#TASKS` / `{created_at}#{task}`: tasks newest first.
 * - Global pointers, not tenant-owned: `KEYHASH#{sha256}` (API keys), `HOOK#{id}` (triggers).
 * - Global `gsi1` partitions the sweep and the timers read: `SWEEP#{shard}`,
 *   `RUNNING`, `WAITING`, `SLOTS`, `STARTS`, `SCHEDULES`.
 */

import { digest } from "../ids";
import type { ItemKey } from "../ports/item-store";

export const tenantPk = (tenant: string): string => `T#${tenant}`;
export const taskPk = (tenant: string, taskId: string): string => `T#${tenant}#K#${taskId}`;

export const taskKey = (tenant: string, taskId: string): ItemKey => ({
  pk: taskPk(tenant, taskId),
  sk: "TASK",
});

export const branchKey = (tenant: string, taskId: string, name: string): ItemKey => ({
  pk: taskPk(tenant, taskId),
  sk: `B#${name}`,
});

/** Commit sort keys sort by depth within a branch: zero-padded to 8 digits. */
export const commitSk = (bid: string, depth: number): string =>
  `C#${bid}#${String(depth).padStart(8, "0")}`;

/**
 * A commit id names the branch (by its internal id `bid`, unique per branch ever
 * created) and the depth: `{bid}-{depth}`. It is derived from (task, branch,
 * parent), since the depth is the parent's plus one, so two workers racing the
 * same step compute the same key and only one conditional put succeeds.
 */
export const commitId = (bid: string, depth: number): string => `${bid}-${depth}`;

const COMMIT_ID = /^([a-z0-9]{8})-(\d{1,8})$/;

/** Parses a commit id; null when it is not one (the API then answers 404). */
export function parseCommitId(id: string): { bid: string; depth: number } | null {
  const match = COMMIT_ID.exec(id);
  if (!match) return null;
  return { bid: match[1]!, depth: Number(match[2]) };
}

export const commitKey = (tenant: string, taskId: string, id: string): ItemKey | null => {
  const parsed = parseCommitId(id);
  return parsed ? { pk: taskPk(tenant, taskId), sk: commitSk(parsed.bid, parsed.depth) } : null;
};

export const tasksIndexPk = (tenant: string): string => `T#${tenant}#TASKS`;

/** The prefix of a task's branch items in its partition. */
export const BRANCH_PREFIX = "B#";

/** A branch's own commits in `[from, upto]`: one sorted range of its task's partition. */
export const commitRange = (bid: string, from: number, upto: number): [string, string] => [
  commitSk(bid, from),
  commitSk(bid, upto),
];

/** The largest depth a commit sort key holds (8 digits). */
export const MAX_DEPTH = 99_999_999;

// --- The sweep index (`vm/step.ts` writes it, `service/sweep.ts` reads it).

/** The number of sweep index partitions. */
export const SWEEP_SHARDS = 4;

export const sweepShard = (taskId: string): number =>
  Number.parseInt(digest(taskId).slice(0, 6), 16) % SWEEP_SHARDS;

/** The `gsi1` partition of one sweep shard: `SWEEP#{shard}`. */
export const sweepIndexPk = (shard: number): string => `SWEEP#${shard}`;

/**
 * Running branches are listed in the `gsi1` index under `SWEEP#{shard}`, sorted by
 * when they started running, so the sweep finds them without a scan (and checks
 * their `updated_at`); the entry goes when the branch ends.
 */
export function sweepIndex(
  branch: { tenant_id: string; task_id: string; name: string },
  movedAt: string,
): Array<[string[], string]> {
  return [
    [["gsi1pk"], sweepIndexPk(sweepShard(branch.task_id))],
    [["gsi1sk"], `${movedAt}#${branch.tenant_id}#${branch.task_id}#${branch.name}`],
  ];
}

/** A parallel group member's result, held until its turn: `G#{bid}#{base}#{seq_no:08}`. */
export const groupHeldKey = (
  branch: { pk: string; bid: string },
  base: string,
  seq: number,
): ItemKey => ({
  pk: branch.pk,
  sk: `G#${branch.bid}#${base}#${String(seq).padStart(8, "0")}`,
});

// --- Task starts and idempotency (`service/task-starts.ts`, `TaskService`, retries).

/** The `gsi1` partition that lists starts under way by time. */
export const STARTS_INDEX = "STARTS";
export const startKey = (tenant: string, taskId: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `START#${taskId}`,
});
/** A task's `Idempotency-Key`. */
export const idempotencyKey = (tenant: string, key: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `IDEM#${key}`,
});
/** A retry's `Idempotency-Key`. */
export const retryIdempotencyKey = (tenant: string, taskId: string, key: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `RETRYIDEM#${taskId}#${key}`,
});

// --- API keys.

export const KEY_PREFIX = "KEY#";
export const apiKeyKey = (tenant: string, keyId: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${KEY_PREFIX}${keyId}`,
});
/** Every key is found by its hash (not tenant-owned: a pointer). */
export const apiKeyHashKey = (hash: string): ItemKey => ({ pk: `KEYHASH#${hash}`, sk: "KEY" });

// --- Namespaces and their tools.

export const NAMESPACE_PREFIX = "NS#";
export const namespaceKey = (tenant: string, name: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${NAMESPACE_PREFIX}${name}`,
});
/** Every tool record of a namespace shares this prefix, whatever its kind. */
export const namespaceToolPrefix = (ns: string): string => `NSTOOL#${ns}#`;
export const namespaceToolKey = (tenant: string, ns: string, tool: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${namespaceToolPrefix(ns)}${tool}`,
});

// --- Schedules, triggers, templates.

/** The `gsi1` partition that lists every schedule (the local timer reads it at start). */
export const SCHEDULES_INDEX = "SCHEDULES";
export const SCHEDULE_PREFIX = "SCHEDULE#";
export const scheduleKey = (tenant: string, id: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${SCHEDULE_PREFIX}${id}`,
});
/** The marker of one due run of a schedule. */
export const scheduleRunKey = (tenant: string, id: string, due: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `SCHEDRUN#${id}#${due}`,
});

export const TRIGGER_PREFIX = "TRIGGER#";
export const triggerKey = (tenant: string, id: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${TRIGGER_PREFIX}${id}`,
});
/** A trigger's URL names no tenant: this pointer does (not tenant-owned). */
export const triggerHookKey = (id: string): ItemKey => ({ pk: `HOOK#${id}`, sk: "HOOK" });
/** The marker of one delivery (`webhook-id`) to a trigger. */
export const triggerDeliveryKey = (
  tenant: string,
  triggerId: string,
  webhookId: string,
): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `HOOKDELIVERY#${triggerId}#${webhookId}`,
});

export const TEMPLATE_PREFIX = "TEMPLATE#";
export const templateKey = (tenant: string, id: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${TEMPLATE_PREFIX}${id}`,
});

// --- Quotas, rate windows, the month's usage, running slots.

export const quotasKey = (tenant: string): ItemKey => ({ pk: tenantPk(tenant), sk: "QUOTAS" });
/** The one-second window of a tenant's API requests. */
export const requestRateKey = (tenant: string): ItemKey => ({ pk: tenantPk(tenant), sk: "RATE" });
/** The bytes of the tenant's uploaded files, counted as they are stored and deleted (`service/quotas.ts`). */
export const fileBytesKey = (tenant: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: "FILEBYTES",
});
/** Trigger deliveries with a bad signature are counted apart from the tenant's requests. */
export const badSignatureRateKey = (tenant: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: "RATE#BAD_SIGNATURE",
});
/** A finished task's expiry marker (`service/retention.ts`), in the task's partition. */
export const expiryKey = (tenant: string, taskId: string): ItemKey => ({
  pk: taskPk(tenant, taskId),
  sk: EXPIRY_SK,
});
export const EXPIRY_SK = "EXPIRES";
/** The global index partition (gsi1) of every expiry marker, by time (`{expires_at}#{tenant}#{task}`). */
export const EXPIRY_INDEX_PK = "EXPIRES";
/** A month's usage (`2026-03`). */
export const usageKey = (tenant: string, month: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${USAGE_PREFIX}${month}`,
});
export const USAGE_PREFIX = "USAGE#";
/** What the runs of one namespace that ended in the month counted (`USAGE#2026-03#NS#default`). */
export const namespaceUsageKey = (tenant: string, month: string, namespace: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${USAGE_PREFIX}${month}${NAMESPACE_USAGE_INFIX}${namespace}`,
});
export const NAMESPACE_USAGE_INFIX = "#NS#";
/** What a branch's calls charged to the month as they were made. */
export const meteredKey = (tenant: string, taskId: string, branch: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `METERED#${taskId}#${branch}`,
});

/**
 * Global index partitions (gsi1) that let the sweep find tenants' running items
 * and waiting tasks; `SLOTS` lists the numbered slot items of earlier versions,
 * which the sweep frees when their task has ended.
 */
export const RUNNING_INDEX = "RUNNING";
export const LEGACY_SLOTS_INDEX = "SLOTS";
export const WAITING_INDEX = "WAITING";
/** The tenant's running item: one attribute per slot held (`slotHolder`) and their `count`. */
export const runningKey = (tenant: string): ItemKey => ({ pk: tenantPk(tenant), sk: "RUNNING" });
/** The attribute of the running item that holds the task's slot. */
export const slotHolder = (taskId: string): string => `${SLOT_HOLDER_PREFIX}${taskId}`;
export const SLOT_HOLDER_PREFIX = "run#";
export const WAITING_PREFIX = "WAIT#";
export const waitingKey = (tenant: string, createdAt: string, taskId: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${WAITING_PREFIX}${createdAt}#${taskId}`,
});

// --- Streams: leases, live text, webhooks.

/** A tenant's open streams' leases: `S#{id}` in this partition. */
export const streamLeasesPk = (tenant: string): string => `${tenantPk(tenant)}#STREAMS`;
export const streamLeaseKey = (tenant: string, id: string): ItemKey => ({
  pk: streamLeasesPk(tenant),
  sk: `S#${id}`,
});

/** A task's live text: `WATCH` (the watch mark) and `TOK#...` batches. */
export const livePk = (tenant: string, taskId: string): string => `${taskPk(tenant, taskId)}#LIVE`;
export const liveWatchKey = (tenant: string, taskId: string): ItemKey => ({
  pk: livePk(tenant, taskId),
  sk: "WATCH",
});
/** A batch of live text: `TOK#{epoch ms:15}#{writer}#{n:6}`, ordered by time. */
export const liveBatchSk = (at: number, writer: string, n: number): string =>
  `${liveBatchesFrom(at)}#${writer}#${String(n).padStart(6, "0")}`;
/** The sort key range of the batches written from `at` on. */
export const liveBatchesFrom = (at: number): string => `TOK#${String(at).padStart(15, "0")}`;
export const LIVE_BATCHES_END = "TOK#~";

export const webhookSecretKey = (tenant: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: "WEBHOOK_SECRET",
});
export const WEBHOOK_DELIVERY_PREFIX = "WH#";
export const webhookDeliveryKey = (tenant: string, taskId: string, webhookId: string): ItemKey => ({
  pk: taskPk(tenant, taskId),
  sk: `${WEBHOOK_DELIVERY_PREFIX}${webhookId}`,
});

// --- Knowledge bases and documents.

export const KNOWLEDGE_BASE_PREFIX = "KB#";
export const kbKey = (tenant: string, kb: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${KNOWLEDGE_BASE_PREFIX}${kb}`,
});
export const documentsPk = (tenant: string, kb: string): string =>
  `${tenantPk(tenant)}#${KNOWLEDGE_BASE_PREFIX}${kb}`;
export const DOCUMENT_PREFIX = "D#";
export const documentKey = (tenant: string, kb: string, documentId: string): ItemKey => ({
  pk: documentsPk(tenant, kb),
  sk: `${DOCUMENT_PREFIX}${documentId}`,
});

// --- Threads: a conversation's turns (`service/threads.ts`).

/** A thread, named by its first turn's task: `T#{t}` / `THREAD#{first task}`. */
export const THREAD_PREFIX = "THREAD#";
export const threadKey = (tenant: string, threadId: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${THREAD_PREFIX}${threadId}`,
});

/** A thread's turns, in the order they started: `T#{t}#THREAD#{id}` / `TURN#{created_at}#{task}`. */
export const TURN_PREFIX = "TURN#";
export const threadTurnsPk = (tenant: string, threadId: string): string =>
  `T#${tenant}#THREAD#${threadId}`;
export const threadTurnKey = (
  tenant: string,
  threadId: string,
  createdAt: string,
  taskId: string,
): ItemKey => ({
  pk: threadTurnsPk(tenant, threadId),
  sk: `${TURN_PREFIX}${createdAt}#${taskId}`,
});

// --- Files (`files/`): uploaded by a tenant, passed to tasks by reference.

export const FILE_PREFIX = "FILE#";
export const fileKey = (tenant: string, fileId: string): ItemKey => ({
  pk: tenantPk(tenant),
  sk: `${FILE_PREFIX}${fileId}`,
});

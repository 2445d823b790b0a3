/**
 * The key layout of the single table. Every tenant-owned key starts with
 * `T#{tenant}`, so no key of one tenant can address another's item.
 *
 * - `T#{t}` / `NS#{name}`, `KEY#{id}`, `TRIGGER#{id}`, `SCHEDULE#{id}`, `TEMPLATE#{id}`, ...:
 *   small per-tenant collections, one partition per tenant.
 * - `T#{t}#K#{task}` / `TASK`: the task; `B#{name}`: its branches;
 *   `C#{bid}#{depth:08}`: its commits, so that one branch's own commits are one
 *   sorted range and a task's whole history is one partition.
 * - `gsi1`: `T#{t}#TASKS` / `{created_at}#{task}`: tasks newest first.
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

// --- The sweep index (`vm/commit.ts` writes it, `service/sweep.ts` reads it).

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

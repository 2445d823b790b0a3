/**
 * The VM state at any commit, in two store calls whatever the history's length:
 * the commit itself, then one batch read of its chain (see `fenwick.ts`); its plan
 * comes from the commit that set it, which the `TaskStore` keeps once read (a
 * committed plan never changes), at the same time.
 */
import { NotFoundError } from "../errors";
import type { Plan } from "../plan/schema";
import type { Blobs } from "../ports/blobs";
import type { CommitRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import { isStoredRef, loadValue, taskBlobPrefix } from "../store/values";

export interface StoredState {
  commit: CommitRecord;
  pc: number | null;
  /** Variables as stored (large values as `{ $blob }` references). */
  variables: Record<string, unknown>;
  /** For each variable, an upper bound of the depth that last set it. */
  varDepth: Record<string, number>;
  plan: Plan | null;
  completed: boolean;
}

/** The window a commit contributes to the state: its `window`, or its outputs. */
async function commitWindow(
  commit: CommitRecord,
  blobs: Blobs,
  prefix: string,
): Promise<Record<string, unknown>> {
  const window = commit.window ?? commit.outputs;
  return isStoredRef(window)
    ? ((await loadValue(window, blobs, prefix)) as Record<string, unknown>)
    : window;
}

export async function readState(
  store: TaskStore,
  blobs: Blobs,
  tenant: string,
  taskId: string,
  commitId: string,
): Promise<StoredState> {
  const commit = await store.getCommit(tenant, taskId, commitId);
  if (!commit) throw new NotFoundError("commit", commitId);
  return stateFromCommit(store, blobs, tenant, taskId, commit);
}

export async function stateFromCommit(
  store: TaskStore,
  blobs: Blobs,
  tenant: string,
  taskId: string,
  commit: CommitRecord,
): Promise<StoredState> {
  const [fetched, plan] = await Promise.all([
    store.getCommits(tenant, taskId, commit.chain),
    commit.plan_commit === commit.commit_id
      ? (commit.plan ?? null)
      : commit.plan_commit
        ? store.planOf(tenant, taskId, commit.plan_commit)
        : null,
  ]);
  const byId = new Map(fetched.map((c) => [c.commit_id, c]));
  const chain = commit.chain.map((id) => {
    const found = byId.get(id);
    if (!found) throw new Error(`commit ${commit.commit_id} names a missing ancestor ${id}`);
    return found;
  });
  const variables: Record<string, unknown> = {};
  const varDepth: Record<string, number> = {};
  for (const ancestor of [...chain].sort((a, b) => a.depth - b.depth).concat(commit)) {
    const window = await commitWindow(ancestor, blobs, taskBlobPrefix(tenant, taskId));
    for (const [name, value] of Object.entries(window)) {
      variables[name] = value;
      varDepth[name] = ancestor.depth;
    }
  }
  return {
    commit,
    pc: commit.pc_after,
    variables,
    varDepth,
    plan,
    completed: commit.status_after === "completed",
  };
}

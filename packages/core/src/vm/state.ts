/**
 * The VM state at any commit, in a bounded number of store calls whatever the
 * history's length: the commit's place in history (`CommitHead`: a small
 * projection of its item), then what it and its chain (see `fenwick.ts`) say
 * about variables, with the commit that set its plan, in one batch.
 * Commits never change, so the `TaskStore` keeps both of the latter once read
 * (`commitViews`, `planOf`): a process that has read or written a commit reads
 * only its head again, which says whether it still exists.
 *
 * The windows name where each variable lives (`window_ids`: the commit whose
 * outputs hold it); a window written before issue 22 holds values (`window`).
 * The values themselves are read only when asked for (`stateValues`): a fork
 * needs the locations alone, a diff only the values that differ.
 */
import { NotFoundError } from "../errors";
import type { Plan } from "../plan/schema";
import type { Blobs } from "../ports/blobs";
import { parseCommitId } from "../store/keys";
import type { CommitHead, TaskStore } from "../store/task-store";
import { isStoredRef, loadValue, taskBlobPrefix } from "../store/values";
import { readLocated } from "./variables";

export interface StoredState {
  tenant: string;
  taskId: string;
  commit: CommitHead;
  pc: number | null;
  /** For each variable, the id of the commit whose outputs hold its value. */
  locations: Record<string, string>;
  /** Values held by windows written before issue 22 (stored form), for names not in `locations`. */
  held: Record<string, unknown>;
  /** For each variable, the depth that set it (an upper bound for a name in `held`). */
  varDepth: Record<string, number>;
  plan: Plan | null;
  completed: boolean;
}

/** A window as stored: inline, or whole in the blob store. */
async function loadWindow<T>(
  window: Record<string, T> | undefined,
  blobs: Blobs,
  prefix: string,
): Promise<Record<string, T> | undefined> {
  return isStoredRef(window)
    ? ((await loadValue(window, blobs, prefix)) as Record<string, T>)
    : window;
}

/** The state at a commit, by id; `NotFoundError` when the commit does not exist. */
export async function readState(
  store: TaskStore,
  blobs: Blobs,
  tenant: string,
  taskId: string,
  commitId: string,
): Promise<StoredState> {
  const commit = await store.getCommitHead(tenant, taskId, commitId);
  if (!commit) throw new NotFoundError("commit", commitId);
  return stateFromCommit(store, blobs, tenant, taskId, commit);
}

/** The state at a commit whose place in history has been read (`TaskStore.getCommitHead`). */
export async function stateFromCommit(
  store: TaskStore,
  blobs: Blobs,
  tenant: string,
  taskId: string,
  commit: CommitHead,
): Promise<StoredState> {
  const { views, plan } = await store.viewsAndPlan(
    tenant,
    taskId,
    [commit.commit_id, ...commit.chain],
    commit.plan_commit,
  );
  const viewOf = (id: string) => {
    const found = views.get(id);
    if (!found) throw new Error(`commit ${commit.commit_id} names a missing ancestor ${id}`);
    return found;
  };
  const own = viewOf(commit.commit_id);
  const chain = commit.chain.map(viewOf);
  const prefix = taskBlobPrefix(tenant, taskId);
  const locations: Record<string, string> = {};
  const held: Record<string, unknown> = {};
  const varDepth: Record<string, number> = {};
  for (const ancestor of [...chain].sort((a, b) => a.depth - b.depth).concat(own)) {
    const [values, ids] = await Promise.all([
      loadWindow(ancestor.window, blobs, prefix),
      loadWindow(ancestor.window_ids, blobs, prefix),
    ]);
    // Before issue 22 a window held every value of its range, its own outputs too.
    for (const [name, value] of Object.entries(values ?? {})) {
      held[name] = value;
      delete locations[name];
      varDepth[name] = ancestor.depth;
    }
    for (const [name, id] of Object.entries(ids ?? {})) {
      locations[name] = id;
      delete held[name];
      varDepth[name] = parseCommitId(id)?.depth ?? ancestor.depth;
    }
    for (const name of Object.keys(ancestor.outputs)) {
      locations[name] = ancestor.commit_id;
      delete held[name];
      varDepth[name] = ancestor.depth;
    }
  }
  return {
    tenant,
    taskId,
    commit,
    pc: commit.pc_after,
    locations,
    held,
    varDepth,
    plan,
    completed: commit.status_after === "completed",
  };
}

/**
 * The stored form of a state's variables (the named ones, or all): held values
 * as they are, located ones from the outputs of their commits (one batch read
 * of those the store does not keep).
 */
export async function stateValues(
  store: TaskStore,
  state: StoredState,
  names?: Iterable<string>,
): Promise<Record<string, unknown>> {
  const wanted = names ? [...names] : [...Object.keys(state.held), ...Object.keys(state.locations)];
  const located = new Map<string, string>();
  const out: Record<string, unknown> = {};
  for (const name of wanted) {
    if (Object.hasOwn(state.held, name)) out[name] = state.held[name];
    else if (Object.hasOwn(state.locations, name)) located.set(name, state.locations[name]!);
  }
  return readLocated(store, state.tenant, state.taskId, located, out);
}

/**
 * Where a branch's variable values live, and loading them. A value is stored
 * once, in the `outputs` of the commit that set it (inline, or as a `{ $blob }`
 * reference when large: `store/values.ts`). The branch item holds neither the
 * values nor their names: the windows of its head and of the head's chain
 * (`fenwick.ts`) tile its whole history and name, for every variable set in
 * their range, the commit that holds it (`window_ids`). So a step reads and
 * writes a bounded amount whatever the number and size of the variables: the
 * `TaskStore` keeps what the commits it wrote or read say (they never change),
 * and a worker that has not seen them reads the head and its chain (at most
 * log2(depth) + 2 items) in one batch, then the commits holding the values it
 * needs in another.
 *
 * A fork shares the values it inherits: its head is the commit it forked, whose
 * chain belongs to the branches it came from. Data written before issue 22
 * keeps values in its windows (`window`), and reads the same way.
 */
import type { Blobs } from "../ports/blobs";
import type { BranchRecord, CommitRecord } from "../store/records";
import type { CommitView, TaskStore } from "../store/task-store";
import { isStoredRef, loadValue, taskBlobPrefix } from "../store/values";
import { lowbit } from "./fenwick";

type Head = Pick<BranchRecord, "tenant_id" | "task_id" | "head" | "chain">;

/** A window as stored: inline, or whole in the blob store. */
async function windowOf<T>(
  window: Record<string, T> | undefined,
  blobs: Blobs,
  prefix: string,
): Promise<Record<string, T>> {
  if (window === undefined) return {};
  return isStoredRef(window)
    ? ((await loadValue(window, blobs, prefix)) as Record<string, T>)
    : window;
}

/** The views of the head and its chain, newest first. */
async function headViews(store: TaskStore, branch: Head): Promise<CommitView[]> {
  if (branch.head === null) return [];
  const ids = [branch.head, ...branch.chain];
  const views = await store.commitViews(branch.tenant_id, branch.task_id, ids);
  return ids.map((id) => {
    const view = views.get(id);
    if (!view) throw new Error(`commit ${id} of the branch's history is missing`);
    return view;
  });
}

/**
 * Where the named variables (all with `names` omitted) live at the head: the id
 * of the commit whose outputs hold each, or, from windows written before issue
 * 22, the value itself (stored form).
 */
async function locate(
  store: TaskStore,
  blobs: Blobs,
  branch: Head,
  names?: ReadonlySet<string>,
): Promise<{ located: Map<string, string>; held: Map<string, unknown> }> {
  const located = new Map<string, string>();
  const held = new Map<string, unknown>();
  const prefix = taskBlobPrefix(branch.tenant_id, branch.task_id);
  const open = (name: string) =>
    (!names || names.has(name)) && !located.has(name) && !held.has(name);
  // Newest first: the first window that names a variable has its latest value.
  for (const view of await headViews(store, branch)) {
    if (names && located.size + held.size === names.size) break;
    for (const name of Object.keys(view.outputs)) {
      if (open(name)) located.set(name, view.commit_id);
    }
    for (const [name, id] of Object.entries(await windowOf(view.window_ids, blobs, prefix))) {
      if (open(name)) located.set(name, id);
    }
    for (const [name, value] of Object.entries(await windowOf(view.window, blobs, prefix))) {
      if (open(name)) held.set(name, value);
    }
  }
  return { located, held };
}

/**
 * The stored form of the named variables at the branch head (all of them with
 * `names` omitted). Unknown names are absent.
 */
export async function storedVariables(
  store: TaskStore,
  blobs: Blobs,
  branch: Head,
  names?: Iterable<string>,
): Promise<Record<string, unknown>> {
  const { located, held } = await locate(store, blobs, branch, names ? new Set(names) : undefined);
  const out: Record<string, unknown> = Object.fromEntries(held);
  return readLocated(store, branch.tenant_id, branch.task_id, located, out);
}

/**
 * Adds to `out` each located variable's stored value, read from the outputs of
 * the commit that holds it (one batch read of those the store does not keep).
 */
export async function readLocated(
  store: TaskStore,
  tenant: string,
  taskId: string,
  located: ReadonlyMap<string, string>,
  out: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (located.size === 0) return out;
  const outputs = await store.outputsOf(tenant, taskId, located.values());
  for (const [name, id] of located) {
    const holder = outputs.get(id);
    if (!holder || !Object.hasOwn(holder, name)) {
      throw new Error(`variable '${name}' should be in the outputs of commit ${id}, which lack it`);
    }
    out[name] = holder[name];
  }
  return out;
}

/** The named variables at the head as they were set: escapes undone, large values loaded whole. */
export async function loadVariables(
  store: TaskStore,
  blobs: Blobs,
  branch: Head,
  names?: Iterable<string>,
): Promise<Record<string, unknown>> {
  const stored = await storedVariables(store, blobs, branch, names);
  const prefix = taskBlobPrefix(branch.tenant_id, branch.task_id);
  const out: Record<string, unknown> = {};
  for (const [name, slot] of Object.entries(stored)) {
    out[name] = await loadValue(slot, blobs, prefix);
  }
  return out;
}

/**
 * The window of the commit at `depth` (the head's depth plus one), when
 * `lowbit(depth) > 1`: every variable set in `(depth - lowbit(depth), depth)`
 * but not in `outputs`, as the id of the commit holding it (`window_ids`) or,
 * for a value kept in a window from before issue 22, the value (`window`).
 * The head and the part of its chain in that range tile it exactly.
 */
export async function nextWindow(
  store: TaskStore,
  blobs: Blobs,
  branch: Head,
  depth: number,
  outputs: Record<string, unknown>,
): Promise<Pick<CommitRecord, "window" | "window_ids">> {
  if (depth === 0 || lowbit(depth) <= 1) return {};
  const start = depth - lowbit(depth);
  const prefix = taskBlobPrefix(branch.tenant_id, branch.task_id);
  const ids: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const inRange = (await headViews(store, branch)).filter((v) => v.depth > start);
  // Oldest first, so that a later setter overwrites an earlier one.
  for (const view of inRange.reverse()) {
    for (const [name, value] of Object.entries(await windowOf(view.window, blobs, prefix))) {
      values[name] = value;
      delete ids[name];
    }
    for (const [name, id] of Object.entries(await windowOf(view.window_ids, blobs, prefix))) {
      ids[name] = id;
      delete values[name];
    }
    for (const name of Object.keys(view.outputs)) {
      ids[name] = view.commit_id;
      delete values[name];
    }
  }
  for (const name of Object.keys(outputs)) {
    delete ids[name];
    delete values[name];
  }
  return { window_ids: ids, ...(Object.keys(values).length > 0 ? { window: values } : {}) };
}

/**
 * Where a branch's variable values live, and loading them. A value is stored
 * once, in the `outputs` of the commit that set it (inline, or as a `{ $blob }`
 * reference when large: `store/values.ts`). The branch item holds only a map of
 * names to the depth of that commit (`var_depth`), so a step reads and writes a
 * bounded amount whatever the size of the state; it loads the values its
 * instruction references, from the commits that hold them (kept in memory by
 * the `TaskStore` once written or read: commits never change).
 *
 * A fork shares the values it inherits: its `var_depth` points into its lineage,
 * whose commits belong to the branches it came from.
 */
import type { Blobs } from "../ports/blobs";
import { commitId } from "../store/keys";
import type { BranchRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import { loadValue, taskBlobPrefix } from "../store/values";

/**
 * The id of the commit at `depth` on the lineage of a branch: its own commits
 * above its fork point, else those of the ancestor segment that covers the depth.
 *
 * @example
 * commitOnLineage({ bid: "b2", lineage: [{ bid: "b1", name: "main", upto: 4 }] }, 3) // "b1-3"
 */
export function commitOnLineage(
  branch: Pick<BranchRecord, "bid" | "lineage">,
  depth: number,
): string {
  // Segments are newest first with falling `upto`: the oldest that still reaches `depth`.
  for (let i = branch.lineage.length - 1; i >= 0; i--) {
    const segment = branch.lineage[i]!;
    if (segment.upto >= depth) return commitId(segment.bid, depth);
  }
  return commitId(branch.bid, depth);
}

/**
 * The stored form of the named variables (all of them with `names` omitted): a
 * value kept on the branch item, else the slot from the outputs of the commit
 * that set it. Unknown names are absent.
 */
export async function storedVariables(
  store: TaskStore,
  branch: BranchRecord,
  names?: Iterable<string>,
): Promise<Record<string, unknown>> {
  const wanted = names ? new Set(names) : new Set(Object.keys(branch.var_depth));
  if (!names) for (const name of Object.keys(branch.vars)) wanted.add(name);
  const out: Record<string, unknown> = {};
  const located = new Map<string, string>();
  for (const name of wanted) {
    if (Object.hasOwn(branch.vars, name)) out[name] = branch.vars[name];
    else if (Object.hasOwn(branch.var_depth, name)) {
      located.set(name, commitOnLineage(branch, branch.var_depth[name]!));
    }
  }
  if (located.size === 0) return out;
  const outputs = await store.outputsOf(branch.tenant_id, branch.task_id, located.values());
  for (const [name, id] of located) {
    const held = outputs.get(id);
    if (!held || !Object.hasOwn(held, name)) {
      throw new Error(`variable '${name}' should be in the outputs of commit ${id}, which lack it`);
    }
    out[name] = held[name];
  }
  return out;
}

/** The named variables as they were set: escapes undone, large values loaded whole. */
export async function loadVariables(
  store: TaskStore,
  blobs: Blobs,
  branch: BranchRecord,
  names?: Iterable<string>,
): Promise<Record<string, unknown>> {
  const stored = await storedVariables(store, branch, names);
  const prefix = taskBlobPrefix(branch.tenant_id, branch.task_id);
  const out: Record<string, unknown> = {};
  for (const [name, slot] of Object.entries(stored)) {
    out[name] = await loadValue(slot, blobs, prefix);
  }
  return out;
}

/**
 * Reading the state at any commit in a bounded number of reads, while each step
 * writes only what it changed. Commits on a branch's lineage have depths 0, 1, 2, ...
 * (the root, the plan, holds the task's inputs in full). A commit at depth `d` stores,
 * besides its own outputs, a *window*: the variables set anywhere in the depths
 * `(d - lowbit(d), d]` with their values after `d` (a Fenwick tree over the history).
 * The state at `d` is then the root's variables overlaid with the windows of the
 * commits at `chain(d)` and of `d` itself: at most log2(d) + 2 items, fetched in one
 * batch read. Each variable assignment is repeated in at most log2(n) windows, so the
 * bytes written per step grow with what the steps change, not with the state.
 */

/** The lowest set bit of a positive integer. */
export const lowbit = (depth: number): number => depth & -depth;

/**
 * The depths whose windows, with `depth`'s own, tile `(0, depth]`, in descending
 * order, ending with the root 0. Empty for the root itself.
 *
 * @example
 * chainDepths(6) // [4, 0]
 * chainDepths(7) // [6, 4, 0]
 */
export function chainDepths(depth: number): number[] {
  const depths: number[] = [];
  let d = depth;
  while (d > 0) {
    d -= lowbit(d);
    depths.push(d);
  }
  return depths;
}

/** The first depth (exclusive) of the window of the commit at `depth`. */
export const windowStart = (depth: number): number => depth - lowbit(depth);

/**
 * The chain (ids at `chainDepths(depth + 1)`) of the commit that follows the head,
 * from the head's id and depth and the head's own chain, which always suffices:
 * chain(d + 1) is a subset of {d} and chain(d).
 */
export function nextChain(headId: string, headDepth: number, headChain: string[]): string[] {
  const known = new Map<number, string>([[headDepth, headId]]);
  chainDepths(headDepth).forEach((depth, i) => {
    const id = headChain[i];
    if (id !== undefined) known.set(depth, id);
  });
  return chainDepths(headDepth + 1).map((depth) => {
    const id = known.get(depth);
    if (id === undefined) throw new Error(`commit chain is missing depth ${depth}`);
    return id;
  });
}

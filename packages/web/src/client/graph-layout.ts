/**
 * The branch graph's geometry: commits as a DAG, one lane per branch, newest
 * first (as `git log --graph`), with an edge from every commit to its parent.
 * An edge that changes lane is a fork point. Pure, so that it is tested without
 * a browser.
 */

/** What the layout needs of a commit. */
export interface GraphCommit {
  commit_id: string;
  parent_id: string | null;
  branch: string;
  created_at: string;
}

/** What the layout needs of a branch. */
export interface GraphBranch {
  name: string;
  head: string | null;
  created_at: string;
}

export interface GraphRow<C> {
  commit: C;
  /** Row 0 is the newest commit. */
  row: number;
  lane: number;
  /** Branches whose head is this commit. */
  heads: string[];
}

export interface GraphEdge {
  /** The child's row and lane. */
  fromRow: number;
  fromLane: number;
  /** The parent's row and lane. */
  toRow: number;
  toLane: number;
  /** The child is on another branch than its parent: a fork point. */
  fork: boolean;
}

export interface GraphLayout<C> {
  rows: GraphRow<C>[];
  edges: GraphEdge[];
  /** Branch names by lane. */
  lanes: string[];
  /** Commits whose parent is not loaded (history cut by paging). */
  cut: Set<string>;
}

/**
 * Lays out commits: lanes in branch creation order (a commit of a deleted
 * branch gets a lane after them), rows newest first. A child sorts above its
 * parent even when both have the same timestamp, since depth breaks the tie.
 *
 * @example
 * const { rows, edges } = layoutGraph(commits, branches);
 * // rows[0] is the newest commit; edges with fork: true start each forked branch
 */
export function layoutGraph<C extends GraphCommit>(
  commits: Iterable<C>,
  branches: readonly GraphBranch[],
): GraphLayout<C> {
  const byId = new Map<string, C>();
  for (const commit of commits) byId.set(commit.commit_id, commit);

  const lanes = [...branches]
    .sort((a, b) => a.created_at.localeCompare(b.created_at))
    .map((b) => b.name);
  const laneOf = new Map(lanes.map((name, i) => [name, i]));
  const headsOf = new Map<string, string[]>();
  for (const branch of branches) {
    if (!branch.head) continue;
    headsOf.set(branch.head, [...(headsOf.get(branch.head) ?? []), branch.name]);
  }

  const depth = depths(byId);
  const ordered = [...byId.values()].sort(
    (a, b) =>
      b.created_at.localeCompare(a.created_at) ||
      depth.get(b.commit_id)! - depth.get(a.commit_id)! ||
      b.commit_id.localeCompare(a.commit_id),
  );

  const rowOf = new Map<string, number>();
  const rows = ordered.map((commit, row) => {
    rowOf.set(commit.commit_id, row);
    let lane = laneOf.get(commit.branch);
    if (lane === undefined) {
      lane = lanes.length;
      lanes.push(commit.branch);
      laneOf.set(commit.branch, lane);
    }
    return { commit, row, lane, heads: headsOf.get(commit.commit_id) ?? [] };
  });

  const edges: GraphEdge[] = [];
  const cut = new Set<string>();
  for (const { commit, row, lane } of rows) {
    if (commit.parent_id === null) continue;
    const parentRow = rowOf.get(commit.parent_id);
    if (parentRow === undefined) {
      cut.add(commit.commit_id);
      continue;
    }
    const parentLane = rows[parentRow]!.lane;
    edges.push({
      fromRow: row,
      fromLane: lane,
      toRow: parentRow,
      toLane: parentLane,
      fork: parentLane !== lane,
    });
  }
  return { rows, edges, lanes, cut };
}

/** Distance from the root of each commit, without recursion (histories run to thousands). */
function depths(byId: ReadonlyMap<string, GraphCommit>): Map<string, number> {
  const depth = new Map<string, number>();
  for (const start of byId.values()) {
    const chain: string[] = [];
    let current: GraphCommit | undefined = start;
    while (current && !depth.has(current.commit_id)) {
      chain.push(current.commit_id);
      current = current.parent_id === null ? undefined : byId.get(current.parent_id);
      if (chain.length > byId.size) break; // a cycle would be a store bug: stop, do not hang
    }
    let base = current ? depth.get(current.commit_id)! : -1;
    for (let i = chain.length - 1; i >= 0; i--) depth.set(chain[i]!, ++base);
  }
  return depth;
}

/** The commits from a head back to the root, newest first (a branch's own history). */
export function ancestry<C extends GraphCommit>(
  byId: ReadonlyMap<string, C>,
  head: string | null,
): C[] {
  const out: C[] = [];
  const seen = new Set<string>();
  let id = head;
  while (id !== null && !seen.has(id)) {
    const commit = byId.get(id);
    if (!commit) break;
    seen.add(id);
    out.push(commit);
    id = commit.parent_id;
  }
  return out;
}

import { describe, expect, it } from "vitest";
import { ancestry, type GraphCommit, layoutGraph } from "./graph-layout";

const c = (id: string, parent: string | null, branch: string, at: number): GraphCommit => ({
  commit_id: id,
  parent_id: parent,
  branch,
  created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, at)).toISOString(),
});
const b = (name: string, head: string, at: number) => ({
  name,
  head,
  created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, at)).toISOString(),
});

describe("layoutGraph", () => {
  const commits = [
    c("m0", null, "main", 0),
    c("m1", "m0", "main", 1),
    c("m2", "m1", "main", 2),
    c("f1", "m1", "fix", 3),
    c("f2", "f1", "fix", 4),
  ];
  const branches = [b("fix", "f2", 3), b("main", "m2", 0)];

  it("puts the newest commit first and each branch in its own lane, in creation order", () => {
    const layout = layoutGraph(commits, branches);
    expect(layout.lanes).toEqual(["main", "fix"]);
    expect(layout.rows.map((r) => [r.commit.commit_id, r.lane])).toEqual([
      ["f2", 1],
      ["f1", 1],
      ["m2", 0],
      ["m1", 0],
      ["m0", 0],
    ]);
  });

  it("marks the edge that leaves the parent's lane as a fork point", () => {
    const { edges } = layoutGraph(commits, branches);
    expect(edges.filter((e) => e.fork)).toEqual([
      { fromRow: 1, fromLane: 1, toRow: 3, toLane: 0, fork: true },
    ]);
    expect(edges).toHaveLength(4);
  });

  it("labels the head commit of each branch", () => {
    const { rows } = layoutGraph(commits, [...branches, b("copy", "m2", 5)]);
    expect(rows.find((r) => r.commit.commit_id === "m2")?.heads).toEqual(["main", "copy"]);
  });

  it("sorts a child above its parent when both carry the same timestamp", () => {
    const same = [c("a", null, "main", 0), c("b", "a", "main", 0), c("c", "b", "main", 0)];
    const { rows } = layoutGraph([...same].reverse(), [b("main", "c", 0)]);
    expect(rows.map((r) => r.commit.commit_id)).toEqual(["c", "b", "a"]);
  });

  it("gives a commit of a deleted branch a lane of its own and notes a cut history", () => {
    const layout = layoutGraph(
      [c("x1", "gone", "old", 1), c("m0", null, "main", 0)],
      [b("main", "m0", 0)],
    );
    expect(layout.lanes).toEqual(["main", "old"]);
    expect([...layout.cut]).toEqual(["x1"]);
  });
});

describe("ancestry", () => {
  it("follows parents from a head back to the root", () => {
    const byId = new Map(
      [c("a", null, "main", 0), c("b", "a", "main", 1), c("x", "a", "fix", 2)].map((x) => [
        x.commit_id,
        x,
      ]),
    );
    expect(ancestry(byId, "x").map((x) => x.commit_id)).toEqual(["x", "a"]);
  });
});

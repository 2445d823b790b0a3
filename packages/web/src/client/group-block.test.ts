import type { Commit } from "@stackvm/core";
import { describe, expect, it } from "vitest";
import { memberStatuses } from "./group-block";

const group = {
  base: "b-1",
  members: [1, 2, 3],
  done: [1, 3],
  started_at: "2026-11-23T10:00:00.000Z",
};
const commit = (branch: string, seq_no: number, created_at: string) =>
  ({ branch, seq_no, type: "step", created_at }) as Commit;

describe("memberStatuses", () => {
  it("marks members running, held, or committed by a commit of this branch since the group began", () => {
    const commits = [
      commit("main", 1, "2026-11-23T10:00:02.000Z"),
      // An earlier run of the same step (before a fork), and another branch's commit: not this group's.
      commit("main", 3, "2026-11-23T09:00:00.000Z"),
      commit("other", 3, "2026-11-23T10:00:03.000Z"),
    ];
    expect(memberStatuses("main", group, commits)).toEqual([
      { seq_no: 1, status: "committed" },
      { seq_no: 2, status: "running" },
      { seq_no: 3, status: "held" },
    ]);
  });
});

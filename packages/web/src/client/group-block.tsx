/** @jsxImportSource hono/jsx/dom */
/**
 * The parallel groups running on a task's branches: each member of a group
 * with its status, live from the events stream (`event: group`). A member is
 * `running` until its result is held, `held` until the join commits it, then
 * `committed` (its commit is in the history); the members commit in plan order.
 */
import type { Branch, Commit, RunningGroup } from "@stackvm/core";
import { when } from "./format";

export type MemberStatus = "running" | "held" | "committed";

/** Each member's status, from the group's mark and the branch's commits. */
export function memberStatuses(
  branch: string,
  group: RunningGroup,
  commits: Iterable<Commit>,
): Array<{ seq_no: number; status: MemberStatus }> {
  const committed = new Set<number>();
  for (const c of commits) {
    if (
      c.branch === branch &&
      c.type === "step" &&
      c.seq_no !== null &&
      c.created_at >= group.started_at
    )
      committed.add(c.seq_no);
  }
  return group.members.map((seq_no) => ({
    seq_no,
    status: committed.has(seq_no) ? "committed" : group.done.includes(seq_no) ? "held" : "running",
  }));
}

export function RunningGroups(props: { branches: Branch[]; commits: ReadonlyMap<string, Commit> }) {
  const grouped = props.branches.filter((b) => b.group);
  if (grouped.length === 0) return null;
  return (
    <section class="card running-groups" aria-labelledby="groups-title">
      <h2 id="groups-title">Running at once</h2>
      {grouped.map((branch) => {
        const group = branch.group!;
        const members = memberStatuses(branch.name, group, props.commits.values());
        const running = members.filter((m) => m.status === "running").length;
        return (
          <div class="group-block" data-branch={branch.name}>
            <p class="muted small">
              Branch <strong>{branch.name}</strong>: {members.length} steps started together at{" "}
              <time dateTime={group.started_at}>{when(group.started_at)}</time>, {running} still
              running; they commit in plan order once all are done.
            </p>
            <ul class="group-members">
              {members.map((m) => (
                <li data-seq={String(m.seq_no)} data-status={m.status}>
                  <span class="member-seq">#{m.seq_no}</span>
                  <span
                    class={`badge status-${m.status === "committed" ? "completed" : m.status === "held" ? "queued" : "running"}`}
                  >
                    {m.status}
                  </span>
                </li>
              ))}
            </ul>
          </div>
        );
      })}
    </section>
  );
}

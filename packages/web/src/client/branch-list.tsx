/** @jsxImportSource hono/jsx/dom */
/**
 * The task's branches: status, where each was forked, and the actions on a
 * branch (promote to result, delete), each confirmed in place.
 */
import type { Branch, Commit } from "@stackvm/core";
import { seg } from "./api";
import { laneClass } from "./branch-graph";
import { commitTitle } from "./instruction-text";
import { ActionResult, ConfirmButton, StatusBadge, useAction, useApi } from "./ui";

export function BranchList(props: {
  taskId: string;
  branches: readonly Branch[];
  lanes: readonly string[];
  commits: ReadonlyMap<string, Commit>;
  resultBranch: string | null;
  highlight: string | null;
  onSelect: (commitId: string) => void;
  onChanged: (reload: boolean) => void;
}) {
  const api = useApi();
  const action = useAction();
  const base = `/v1/tasks/${seg(props.taskId)}/branches`;
  return (
    <section class="branch-list" aria-labelledby="branches-title">
      <h2 id="branches-title">Branches</h2>
      <ul>
        {props.branches.map((branch) => {
          const lane = props.lanes.indexOf(branch.name);
          const isResult = branch.name === props.resultBranch;
          const from = branch.forked_from
            ? props.commits.get(branch.forked_from.commit_id)
            : undefined;
          return (
            <li
              class={`branch${branch.name === props.highlight ? " highlight" : ""}`}
              data-branch={branch.name}
            >
              <span class={`swatch ${laneClass(Math.max(0, lane))}`} aria-hidden="true" />
              <button
                type="button"
                class="link branch-name"
                disabled={!branch.head}
                onClick={() => branch.head && props.onSelect(branch.head)}
                title="Select this branch's head commit"
              >
                {branch.name}
              </button>
              <StatusBadge status={branch.status} />
              {isResult ? <span class="badge result">result ★</span> : null}
              {branch.forked_from ? (
                <span class="muted small">
                  from {branch.forked_from.branch}
                  {from ? ` at ${commitTitle(from)}` : ""}
                </span>
              ) : null}
              <span class="branch-actions">
                {isResult ? null : (
                  <button
                    type="button"
                    disabled={action.pending}
                    onClick={() =>
                      action.run(async () => {
                        await api.post(`${base}/${seg(branch.name)}/promote`);
                        props.onChanged(false);
                        return (
                          <>
                            Promoted <strong>{branch.name}</strong>: it is now the task's result
                            branch, and the task's answer and status are its own.
                          </>
                        );
                      })
                    }
                  >
                    Promote
                  </button>
                )}
                {isResult ? null : (
                  <ConfirmButton
                    label="Delete"
                    question={`Delete branch ${branch.name} and the commits only it reaches?`}
                    confirmLabel="Yes, delete"
                    disabled={action.pending}
                    onConfirm={() =>
                      action.run(async () => {
                        await api.delete(`${base}/${seg(branch.name)}`);
                        props.onChanged(true);
                        return (
                          <>
                            Deleted branch <strong>{branch.name}</strong>.
                          </>
                        );
                      })
                    }
                  />
                )}
              </span>
            </li>
          );
        })}
      </ul>
      <ActionResult action={action} title="The branch was not changed" />
    </section>
  );
}

/** @jsxImportSource hono/jsx/dom */
/**
 * A commit against its parent, or against any commit picked in the graph:
 * the PC move, variables added, removed and changed (before and after side by
 * side), and the two plans side by side, paired by seq_no.
 */
import type { Commit, Diff, State } from "@stackvm/core";
import { seg } from "./api";
import { shortId } from "./format";
import { commitTitle } from "./instruction-text";
import { JsonView } from "./json-view";
import { alignPlans } from "./plan-diff";
import { ErrorBox, useApi, useLoad } from "./ui";

function PlanSideBySide(props: { before: readonly unknown[]; after: readonly unknown[] }) {
  const pairs = alignPlans(props.before, props.after);
  const changed = pairs.filter((p) => p.change !== "same").length;
  return (
    <div class="side-by-side plan-diff">
      <p class="muted small">
        {changed} of {pairs.length} instructions differ; unchanged ones are folded.
      </p>
      <div class="sbs-head">
        <span>before</span>
        <span>after</span>
      </div>
      {pairs.map((pair) =>
        pair.change === "same" ? (
          <details class="sbs-row same">
            <summary>seq_no {pair.key}: unchanged</summary>
            <div class="sbs-cols">
              <JsonView value={pair.left} />
              <JsonView value={pair.right} />
            </div>
          </details>
        ) : (
          <div class={`sbs-row ${pair.change}`} data-seq={pair.key}>
            <div class="sbs-label">
              seq_no {pair.key}: {pair.change}
            </div>
            <div class="sbs-cols">
              {pair.left === undefined ? (
                <div class="gap">(none)</div>
              ) : (
                <JsonView value={pair.left} />
              )}
              {pair.right === undefined ? (
                <div class="gap">(none)</div>
              ) : (
                <JsonView value={pair.right} />
              )}
            </div>
          </div>
        ),
      )}
    </div>
  );
}

export function DiffView(props: {
  taskId: string;
  commit: Commit;
  /** The other side chosen in the graph, or null for the parent. */
  against: string | null;
  commits: ReadonlyMap<string, Commit>;
  picking: boolean;
  onPick: () => void;
  onClear: () => void;
}) {
  const api = useApi();
  const { commit } = props;
  const base = `/v1/tasks/${seg(props.taskId)}/commits`;
  const otherId = props.against ?? commit.parent_id;
  const other = otherId ? props.commits.get(otherId) : undefined;
  const diff = useLoad(async () => {
    const query = props.against ? `?against=${encodeURIComponent(props.against)}` : "";
    const d = await api.get<Diff>(`${base}/${seg(commit.commit_id)}/diff${query}`);
    if (!d.plan_changed) return { diff: d, plans: null };
    const [after, before] = await Promise.all([
      api.get<State>(`${base}/${seg(commit.commit_id)}/state`),
      otherId ? api.get<State>(`${base}/${seg(otherId)}/state`) : Promise.resolve(null),
    ]);
    return { diff: d, plans: { before: before?.plan ?? [], after: after.plan } };
  }, [commit.commit_id, props.against]);

  const d = diff.data?.diff;
  const names = d
    ? [
        ...new Set([...Object.keys(d.added), ...Object.keys(d.removed), ...Object.keys(d.changed)]),
      ].sort()
    : [];
  return (
    <div class="diff-view">
      <div class="diff-head">
        <p>
          <strong>{commitTitle(commit)}</strong> against{" "}
          {props.against ? "the chosen commit" : "its parent"}{" "}
          {otherId ? (
            <code title={otherId}>
              {other ? `${commitTitle(other)} on ${other.branch}` : shortId(otherId)}
            </code>
          ) : (
            <em>(none: this is the first commit)</em>
          )}
        </p>
        <div class="row">
          <button
            type="button"
            onClick={props.onPick}
            aria-pressed={props.picking ? "true" : "false"}
          >
            {props.picking ? "Now click a commit in the graph…" : "Compare with another commit…"}
          </button>
          {props.against ? (
            <button type="button" onClick={props.onClear}>
              Against its parent
            </button>
          ) : null}
        </div>
      </div>
      <ErrorBox error={diff.error} title="Could not compute the diff" />
      {d ? (
        <>
          <p class="pc-move">
            PC {d.pc.from ?? "—"} → {d.pc.to ?? "—"}
            {d.plan_changed ? (
              <span class="badge warn">plan changed</span>
            ) : (
              <span class="badge">plan unchanged</span>
            )}
          </p>
          <h3>Variables</h3>
          {names.length === 0 ? (
            <p class="muted">No variable changed.</p>
          ) : (
            <div class="side-by-side var-diff">
              <div class="sbs-head">
                <span>before</span>
                <span>after</span>
              </div>
              {names.map((name) => {
                const kind = name in d.added ? "added" : name in d.removed ? "removed" : "changed";
                const before =
                  kind === "added"
                    ? undefined
                    : kind === "removed"
                      ? d.removed[name]
                      : d.changed[name]?.from;
                const after =
                  kind === "removed"
                    ? undefined
                    : kind === "added"
                      ? d.added[name]
                      : d.changed[name]?.to;
                return (
                  <div class={`sbs-row ${kind}`} data-var={name}>
                    <div class="sbs-label">
                      <code>{name}</code> {kind}
                    </div>
                    <div class="sbs-cols">
                      {before === undefined ? (
                        <div class="gap">(unset)</div>
                      ) : (
                        <JsonView value={before} />
                      )}
                      {after === undefined ? (
                        <div class="gap">(unset)</div>
                      ) : (
                        <JsonView value={after} />
                      )}
                    </div>
                  </div>
                );
              })}
            </div>
          )}
          {diff.data?.plans ? (
            <>
              <h3>Plan</h3>
              <PlanSideBySide before={diff.data.plans.before} after={diff.data.plans.after} />
            </>
          ) : null}
        </>
      ) : diff.loading ? (
        <p class="muted">Computing the diff…</p>
      ) : null}
    </div>
  );
}

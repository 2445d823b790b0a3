/** @jsxImportSource hono/jsx/dom */
/**
 * The branch graph: every commit of the task as a row, newest first, drawn as
 * a DAG with one lane per branch so that fork points show where a branch left
 * its parent. A row is a button: click selects the commit, Shift+click (or the
 * diff's "compare with" mode) picks it as the other side of the diff, and the
 * arrow keys move along the rows.
 */
import type { Commit } from "@stackvm/core";
import { age, oneLine, when } from "./format";
import type { GraphLayout } from "./graph-layout";
import { commitTitle, describeInstruction } from "./instruction-text";

const ROW = 40;
const LANE = 18;
const PAD = 14;

/** The lane's colour class; the palette repeats past eight lanes. */
export const laneClass = (lane: number) => `lane-${lane % 8}`;

/** What a row says about its commit, also what the search looks in. */
export function commitSummary(commit: Commit): string {
  if (commit.error)
    return oneLine((commit.error as { message?: unknown }).message ?? commit.error, 90);
  if (commit.type === "step" || commit.type === "error") {
    return describeInstruction(commit.instruction);
  }
  const reasoning = commit.details?.reasoning ?? commit.details?.suggestion;
  if (typeof reasoning === "string") return oneLine(reasoning, 90);
  return oneLine(
    commit.outputs && Object.keys(commit.outputs).length ? commit.outputs : (commit.inputs ?? ""),
    90,
  );
}

export function BranchGraph(props: {
  layout: GraphLayout<Commit>;
  selected: string | null;
  against: string | null;
  resultBranch: string | null;
  /** A search: rows that do not match are hidden, and so are the lines. */
  filter: string;
  onSelect: (commitId: string, compare: boolean) => void;
}) {
  const { layout } = props;
  const needle = props.filter.trim().toLowerCase();
  const rows = needle
    ? layout.rows.filter(({ commit }) =>
        [
          commit.commit_id,
          commit.branch,
          commit.type,
          commitTitle(commit),
          commitSummary(commit),
          JSON.stringify(commit.outputs),
        ]
          .join(" ")
          .toLowerCase()
          .includes(needle),
      )
    : layout.rows;
  const width = PAD * 2 + Math.max(0, layout.lanes.length - 1) * LANE;
  const x = (lane: number) => PAD + lane * LANE;
  const y = (row: number) => row * ROW + ROW / 2;

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const list = event.currentTarget as HTMLElement;
    const buttons = [...list.querySelectorAll<HTMLButtonElement>("button.commit-row")];
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    const next = buttons[at + (event.key === "ArrowDown" ? 1 : -1)];
    if (next) {
      event.preventDefault();
      next.focus();
      next.click();
    }
  };

  return (
    <div class="graph" style={`--graph-width: ${needle ? 0 : width}px; --row: ${ROW}px`}>
      {needle ? (
        <p class="muted small" role="status">
          {rows.length} of {layout.rows.length} commits match “{props.filter}”
        </p>
      ) : (
        <svg
          class="graph-lines"
          width={width}
          height={layout.rows.length * ROW}
          aria-hidden="true"
          focusable="false"
        >
          {layout.edges.map((edge) => {
            const x1 = x(edge.fromLane);
            const y1 = y(edge.fromRow);
            const x2 = x(edge.toLane);
            const y2 = y(edge.toRow);
            const d = edge.fork
              ? `M${x1} ${y1} L${x1} ${y2 - ROW * 0.7} C${x1} ${y2 - ROW * 0.2} ${x2} ${y2 - ROW * 0.45} ${x2} ${y2}`
              : `M${x1} ${y1} L${x2} ${y2}`;
            return (
              <path d={d} class={`edge ${laneClass(edge.fromLane)}${edge.fork ? " fork" : ""}`} />
            );
          })}
          {layout.rows.map(({ commit, row, lane }) => (
            <circle
              cx={x(lane)}
              cy={y(row)}
              r={commit.commit_id === props.selected ? 6.5 : commit.type === "step" ? 4.5 : 5.5}
              class={`node ${laneClass(lane)} type-${commit.type}${commit.commit_id === props.selected ? " selected" : ""}${layout.cut.has(commit.commit_id) ? " cut" : ""}`}
            />
          ))}
        </svg>
      )}
      <ol class="commit-rows" aria-label="Commits, newest first" onKeyDown={onKeyDown}>
        {rows.map(({ commit, lane, heads }) => {
          const selected = commit.commit_id === props.selected;
          const against = commit.commit_id === props.against;
          return (
            <li>
              <button
                type="button"
                class={`commit-row${selected ? " selected" : ""}${against ? " against" : ""}${commit.type === "error" ? " is-error" : ""}`}
                data-commit={commit.commit_id}
                data-branch={commit.branch}
                aria-pressed={selected ? "true" : "false"}
                title={`${commit.commit_id} on ${commit.branch}, ${when(commit.created_at)}`}
                onClick={(event: MouseEvent) => props.onSelect(commit.commit_id, event.shiftKey)}
              >
                <span class="row-title">
                  <span class={`type-tag type-${commit.type}`}>{commitTitle(commit)}</span>
                  {heads.map((name) => (
                    <span class={`head-tag ${laneClass(layout.lanes.indexOf(name))}`}>
                      {name}
                      {name === props.resultBranch ? " ★" : ""}
                    </span>
                  ))}
                  {against ? <span class="against-tag">compared</span> : null}
                  {needle ? (
                    <span class={`branch-name ${laneClass(lane)}`}>{commit.branch}</span>
                  ) : null}
                </span>
                <span class="row-summary">{commitSummary(commit)}</span>
                <span class="row-time">{age(commit.created_at)}</span>
              </button>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

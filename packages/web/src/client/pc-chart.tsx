/** @jsxImportSource hono/jsx/dom */
/**
 * The original StackVM's chart, kept as a second view of the history: the
 * program counter (y) after each commit, commits in time order (x), one
 * stepped line per branch. A forked branch's line starts at its fork point.
 * Clicking a point selects its commit.
 */
import type { Commit } from "@stackvm/core";
import { laneClass } from "./branch-graph";
import { commitTitle } from "./instruction-text";
import { pcTicks } from "./pc-ticks";

const STEP = 30;
const HEIGHT = 220;
const PAD = 28;

export function PcChart(props: {
  commits: readonly Commit[];
  lanes: readonly string[];
  selected: string | null;
  onSelect: (commitId: string) => void;
}) {
  const ordered = [...props.commits].sort((a, b) => a.created_at.localeCompare(b.created_at));
  const xOf = new Map(ordered.map((c, i) => [c.commit_id, PAD + i * STEP]));
  const pcs = ordered.map((c) => c.pc_after ?? c.pc_before).filter((p): p is number => p !== null);
  const maxPc = Math.max(1, ...pcs);
  const yOf = (pc: number) => HEIGHT - PAD - (pc / maxPc) * (HEIGHT - 2 * PAD);
  const byId = new Map(ordered.map((c) => [c.commit_id, c]));
  const width = PAD * 2 + Math.max(1, ordered.length - 1) * STEP;

  const lines = props.lanes.map((name, lane) => {
    const own = ordered.filter((c) => c.branch === name);
    const first = own[0];
    const fork = first?.parent_id ? byId.get(first.parent_id) : undefined;
    const points = [...(fork && fork.branch !== name ? [fork] : []), ...own]
      .map((c) => ({ c, pc: c.pc_after ?? c.pc_before }))
      .filter((p): p is { c: Commit; pc: number } => p.pc !== null);
    let d = "";
    for (const [i, { c, pc }] of points.entries()) {
      const x = xOf.get(c.commit_id)!;
      d += i === 0 ? `M${x} ${yOf(pc)}` : ` H${x} V${yOf(pc)}`;
    }
    return { name, lane, d, points };
  });

  return (
    <figure class="pc-chart">
      <svg width={width} height={HEIGHT} role="img" aria-labelledby="pc-chart-title">
        <title id="pc-chart-title">Program counter over time, one line per branch</title>
        <text x={4} y={14} class="axis-label">
          PC
        </text>
        <text x={width - 4} y={HEIGHT - 6} class="axis-label end">
          commits in time order →
        </text>
        {pcTicks(maxPc).map((pc) => (
          <g>
            <line x1={PAD} x2={width - PAD / 2} y1={yOf(pc)} y2={yOf(pc)} class="grid-line" />
            <text x={4} y={yOf(pc) + 4} class="axis-label">
              {pc}
            </text>
          </g>
        ))}
        {lines.map((line) => (
          <path d={line.d} class={`pc-line ${laneClass(line.lane)}`} />
        ))}
        {lines.flatMap((line) =>
          line.points
            .filter(({ c }) => c.branch === line.name)
            .map(({ c, pc }) => (
              // A link, so that keyboard users reach every point too.
              <a
                href={`?commit=${encodeURIComponent(c.commit_id)}&view=pc`}
                aria-label={`${commitTitle(c)} on ${c.branch}, PC ${pc}`}
                onClick={(event: MouseEvent) => {
                  event.preventDefault();
                  props.onSelect(c.commit_id);
                }}
              >
                <circle
                  cx={xOf.get(c.commit_id)}
                  cy={yOf(pc)}
                  r={c.commit_id === props.selected ? 6 : 4}
                  class={`node ${laneClass(line.lane)}${c.commit_id === props.selected ? " selected" : ""}`}
                >
                  <title>{`${commitTitle(c)} on ${c.branch}: PC ${pc} (${c.commit_id})`}</title>
                </circle>
              </a>
            )),
        )}
      </svg>
    </figure>
  );
}

/**
 * The eval's tables: one run (a row per case and the totals), and two saved
 * runs side by side. Plain text, columns padded, so it reads in a terminal and
 * pastes into an issue.
 */
import type { PlanningMode } from "./dataset";
import { type CaseResult, type Totals, totalsOf } from "./metrics";

/** A saved run, as `.stackvm/eval/<timestamp>.json` holds it. */
export interface EvalRun {
  version: 1;
  run_id: string;
  /** What was evaluated: the model(s) and where the stack was. */
  label: string;
  /** How its tasks were planned (runs saved before both modes were run have none: up front). */
  planning?: PlanningMode;
  llm: Record<string, unknown> | null;
  stack: string;
  started_at: string;
  finished_at: string;
  totals: Totals;
  results: CaseResult[];
}

const yes = (b: boolean | null) => (b === null ? "-" : b ? "yes" : "no");
const tokens = (r: { input_tokens: number; output_tokens: number }) =>
  r.input_tokens + r.output_tokens;
const usd = (n: number) => (n === 0 ? "0" : n < 0.0001 ? n.toExponential(1) : n.toFixed(4));
const secs = (ms: number) => (ms / 1000).toFixed(1);

/** Lays out rows of cells as padded columns (numbers right-aligned). */
export function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) =>
          /^[-+]?[\d.]+(e[-+]?\d+)?%?$/.test(cell)
            ? cell.padStart(widths[i]!)
            : cell.padEnd(widths[i]!),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** The table of one run: a row per case, then the totals. */
export function runTable(results: CaseResult[]): string {
  const head = [
    "case",
    "feature",
    "check",
    "plan 1st",
    "attempts",
    "updates",
    "completed",
    "right",
    "llm calls",
    "tokens",
    "cost $",
    "wall s",
    "status",
  ];
  const rows = results.map((r) =>
    r.status === "skipped"
      ? [
          r.id,
          r.feature,
          r.checker,
          "-",
          "-",
          "-",
          "-",
          "-",
          "-",
          "-",
          "-",
          "-",
          `skipped: ${r.reason}`,
        ]
      : [
          r.id,
          r.feature,
          r.checker,
          yes(r.plan_first_try),
          r.plan_attempts === null ? "-" : String(r.plan_attempts),
          String(r.plan_updates),
          yes(r.completed),
          yes(r.right),
          String(r.llm_calls),
          String(tokens(r)),
          usd(r.cost_usd),
          secs(r.wall_ms),
          r.right ? r.status : `${r.status}: ${r.reason}`.slice(0, 100),
        ],
  );
  const t = totalsOf(results);
  rows.push([
    "TOTAL",
    `${t.ran} ran`,
    t.skipped ? `${t.skipped} skipped` : "",
    `${t.plan_first_try}/${t.goal_cases}`,
    String(t.plan_attempts),
    String(t.plan_updates),
    `${t.completed}/${t.ran}`,
    `${t.right}/${t.ran}`,
    String(t.llm_calls),
    String(t.input_tokens + t.output_tokens),
    usd(t.cost_usd),
    secs(t.wall_ms),
    "",
  ]);
  const extra: string[] = [];
  if (t.judge_llm_calls)
    extra.push(`judge: ${t.judge_llm_calls} llm calls, $${usd(t.judge_cost_usd)}`);
  if (t.ingest_llm_calls)
    extra.push(`ingest: ${t.ingest_llm_calls} llm calls, $${usd(t.ingest_cost_usd)}`);
  return `${columns([head, ...rows])}${extra.length ? `\n(not in the totals: ${extra.join("; ")})` : ""}`;
}

/**
 * Two saved runs side by side: per case right, completed, LLM calls, tokens and
 * wall time of each, and the totals with their change. Cases in only one run
 * are listed with a dash for the other.
 */
export function compareTable(a: EvalRun, b: EvalRun): string {
  const ids = [...new Set([...a.results.map((r) => r.id), ...b.results.map((r) => r.id)])];
  const find = (run: EvalRun, id: string) =>
    run.results.find((r) => r.id === id && r.status !== "skipped");
  const pair = (x: string, y: string) => `${x} | ${y}`;
  const head = [
    "case",
    "right A | B",
    "completed A | B",
    "plan 1st A | B",
    "llm calls A | B",
    "tokens A | B",
    "wall s A | B",
    "",
  ];
  const rows = ids.map((id) => {
    const x = find(a, id);
    const y = find(b, id);
    const cell = (f: (r: CaseResult) => string) => pair(x ? f(x) : "-", y ? f(y) : "-");
    const changed = x && y && x.right !== y.right ? (y.right ? "now right" : "now wrong") : "";
    return [
      id,
      cell((r) => yes(r.right)),
      cell((r) => yes(r.completed)),
      cell((r) => yes(r.plan_first_try)),
      cell((r) => String(r.llm_calls)),
      cell((r) => String(tokens(r))),
      cell((r) => secs(r.wall_ms)),
      changed,
    ];
  });
  const [ta, tb] = [a.totals, b.totals];
  const delta = (x: number, y: number) => {
    const d = y - x;
    return d === 0 ? "" : ` (${d > 0 ? "+" : ""}${Number.isInteger(d) ? d : d.toFixed(4)})`;
  };
  rows.push([
    "TOTAL",
    pair(`${ta.right}/${ta.ran}`, `${tb.right}/${tb.ran}`) + delta(ta.right, tb.right),
    pair(`${ta.completed}/${ta.ran}`, `${tb.completed}/${tb.ran}`) +
      delta(ta.completed, tb.completed),
    pair(`${ta.plan_first_try}/${ta.goal_cases}`, `${tb.plan_first_try}/${tb.goal_cases}`),
    pair(String(ta.llm_calls), String(tb.llm_calls)) + delta(ta.llm_calls, tb.llm_calls),
    pair(String(ta.input_tokens + ta.output_tokens), String(tb.input_tokens + tb.output_tokens)),
    pair(secs(ta.wall_ms), secs(tb.wall_ms)),
    pair(`$${usd(ta.cost_usd)}`, `$${usd(tb.cost_usd)}`),
  ]);
  return `A: ${a.label} (${a.started_at})\nB: ${b.label} (${b.started_at})\n\n${columns([head, ...rows])}`;
}

/**
 * The same cases planned both ways, side by side: per case whether it was
 * solved (right), its steps, plan updates, LLM calls and tokens in each mode,
 * and why the mode that missed it missed it (the checker's or the task's
 * reason); then the totals, and which cases only one mode solved. This is
 * where a goal whose next action depends on a result shows what adaptive
 * planning buys, and what it costs in planning calls.
 */
export function modesTable(upFront: CaseResult[], adaptive: CaseResult[]): string {
  const ids = [...new Set([...upFront.map((r) => r.id), ...adaptive.map((r) => r.id)])];
  const find = (results: CaseResult[], id: string) =>
    results.find((r) => r.id === id && r.status !== "skipped");
  const pair = (x: string, y: string) => `${x} | ${y}`;
  const why = (r: CaseResult | undefined, mode: string) =>
    r && !r.right ? `${mode}: ${r.status}: ${r.reason}`.slice(0, 100) : "";
  const head = [
    "case",
    "solved up | ad",
    "steps up | ad",
    "updates up | ad",
    "llm calls up | ad",
    "tokens up | ad",
    "why not",
  ];
  const rows = ids.map((id) => {
    const x = find(upFront, id);
    const y = find(adaptive, id);
    const cell = (f: (r: CaseResult) => string) => pair(x ? f(x) : "-", y ? f(y) : "-");
    return [
      id,
      cell((r) => yes(r.right)),
      cell((r) => String(r.steps)),
      cell((r) => String(r.plan_updates)),
      cell((r) => String(r.llm_calls)),
      cell((r) => String(tokens(r))),
      [why(x, "up front"), why(y, "adaptive")].filter(Boolean).join("; "),
    ];
  });
  const [tu, ta] = [totalsOf(upFront), totalsOf(adaptive)];
  rows.push([
    "TOTAL",
    pair(`${tu.right}/${tu.ran}`, `${ta.right}/${ta.ran}`),
    pair(String(tu.steps), String(ta.steps)),
    pair(String(tu.plan_updates), String(ta.plan_updates)),
    pair(String(tu.llm_calls), String(ta.llm_calls)),
    pair(String(tu.input_tokens + tu.output_tokens), String(ta.input_tokens + ta.output_tokens)),
    "",
  ]);
  const only = (a: CaseResult[], b: CaseResult[]) =>
    ids.filter((id) => find(a, id)?.right === true && find(b, id)?.right === false);
  const list = (names: string[]) => (names.length ? names.join(", ") : "none");
  return `${columns([head, ...rows])}\nsolved only adaptive: ${list(only(adaptive, upFront))}\nsolved only up front: ${list(only(upFront, adaptive))}`;
}

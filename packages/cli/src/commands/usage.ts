/**
 * `stackvm usage`: the tenant's own months (`GET /v1/usage`), a table of its
 * namespaces under each month.
 */
import type { UsageReport } from "@stackvm/core";
import { type Command, JSON_OPTION, printJson } from "../command";
import { EXIT, usage } from "../exit-codes";

const MAX_MONTHS = 36;

const dollars = (n: number) => `$${n.toFixed(4)}`;

/** The lines of one report, a table per month. */
export function usageLines(report: UsageReport): string[] {
  const lines: string[] = [];
  const head = ["namespace", "runs", "steps", "llm calls", "in tokens", "out tokens", "cost"];
  for (const m of report.months) {
    lines.push(`${m.month}  budget counted ${m.tokens} tokens, ${dollars(m.cost_usd)}`);
    const rows = [...m.namespaces, { namespace: "total", ...m.runs }].map((n) => [
      n.namespace,
      String(n.runs),
      String(n.steps),
      String(n.llm_calls),
      String(n.input_tokens),
      String(n.output_tokens),
      dollars(n.cost_usd),
    ]);
    if (m.namespaces.length === 0) {
      lines.push("  no run ended this month", "");
      continue;
    }
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
    const line = (cells: string[]) =>
      `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ")}`;
    lines.push(line(head), ...rows.map(line), "");
  }
  return lines;
}

export const usageCommand: Command = {
  name: "usage",
  summary: "Your tenant's steps, LLM calls, tokens and cost by month and namespace.",
  usage: "stackvm usage [--months N] [--json]",
  options: {
    months: {
      type: "string",
      description: `how many months back, this one included (1..${MAX_MONTHS}, default 12)`,
    },
    ...JSON_OPTION,
  },
  args: [],
  async run(ctx, v) {
    let months: number | undefined;
    if (v.months !== undefined) {
      months = Number(v.months);
      if (!Number.isInteger(months) || months < 1 || months > MAX_MONTHS)
        throw usage(`--months must be a whole number from 1 to ${MAX_MONTHS}`, "usage");
    }
    const report = await ctx.client.request<UsageReport>("GET", "/v1/usage", {
      query: { months },
    });
    if (v.json) return printJson(ctx.out, report);
    for (const line of usageLines(report)) ctx.out.line(line);
    return EXIT.ok;
  },
};

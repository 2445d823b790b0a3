/** @jsxImportSource hono/jsx/dom */
/**
 * Usage: the tenant's own months (`GET /v1/usage`), each with what the monthly
 * budget counted and a table of its namespaces' runs, steps, LLM calls, tokens
 * and cost.
 */
import type { UsageReport } from "@stackvm/core";
import { ErrorBox, useApi, useLoad } from "../ui";

const dollars = (n: number) => `$${n.toFixed(4)}`;

export function UsagePage() {
  const api = useApi();
  const report = useLoad(() => api.get<UsageReport>("/v1/usage?months=12"), []);
  return (
    <section aria-labelledby="usage-title">
      <div class="page-head">
        <h1 id="usage-title">Usage</h1>
      </div>
      <p class="muted">
        This month and the earlier ones with any usage. A run counts in its namespace when it ends;
        the budget's count also holds the calls of runs still going and documents' ingest.
      </p>
      <ErrorBox error={report.error} title="Could not load the usage" />
      {(report.data?.months ?? []).map((m) => (
        <article class="card" data-month={m.month} aria-labelledby={`usage-${m.month}`}>
          <h2 class="card-title" id={`usage-${m.month}`}>
            {m.month}
          </h2>
          <p class="muted small">
            The monthly budget counted {m.tokens} tokens, {dollars(m.cost_usd)}.
          </p>
          {m.namespaces.length === 0 ? (
            <p class="empty">No run ended this month.</p>
          ) : (
            <div class="table-wrap">
              <table class="usage">
                <thead>
                  <tr>
                    <th scope="col">Namespace</th>
                    <th scope="col">Runs</th>
                    <th scope="col">Steps</th>
                    <th scope="col">LLM calls</th>
                    <th scope="col">Input tokens</th>
                    <th scope="col">Output tokens</th>
                    <th scope="col">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {[...m.namespaces, { namespace: "", ...m.runs }].map((n) => (
                    <tr data-namespace={n.namespace || undefined}>
                      <th scope="row">{n.namespace || "Total"}</th>
                      <td>{n.runs}</td>
                      <td>{n.steps}</td>
                      <td>{n.llm_calls}</td>
                      <td>{n.input_tokens}</td>
                      <td>{n.output_tokens}</td>
                      <td>{dollars(n.cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </article>
      ))}
    </section>
  );
}

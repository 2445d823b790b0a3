/**
 * `stackvm trace TASK COMMIT N`: one LLM call of a commit as the model saw it
 * (the messages, as a conversation), what it answered, and each attempt.
 */
import type { LlmCallTrace } from "@stackvm/core";
import { type Command, JSON_OPTION, printJson } from "../command";
import { EXIT, usage } from "../exit-codes";
import { count, usd } from "../render";
import type { Out } from "../style";

const id = encodeURIComponent;

/** The request's parameters on one line: the format asked for, temperature, max tokens. */
function parameters(request: LlmCallTrace["request"]): string {
  const format = request.response_format as
    | { type?: string; json_schema?: { name?: string } }
    | undefined;
  const parts = [
    format === undefined
      ? "free text"
      : format.json_schema?.name
        ? `JSON schema '${format.json_schema.name}'`
        : "any JSON object",
  ];
  if (request.temperature !== undefined) parts.push(`temperature ${request.temperature}`);
  if (request.max_tokens !== undefined) parts.push(`max ${count(request.max_tokens)} tokens`);
  return parts.join(" · ");
}

function section(out: Out, title: string, text: string): void {
  out.line(out.paint("bold", `── ${title} ──`));
  out.line(text);
  out.line("");
}

export function printTrace(out: Out, trace: LlmCallTrace): void {
  const seconds = (trace.latency_ms / 1000).toFixed(1);
  out.line(
    `${trace.purpose} · ${trace.model} · ${count(trace.input_tokens)} in / ${count(trace.output_tokens)} out tokens · ${usd(trace.cost_usd)} · ${seconds} s`,
  );
  const round = trace.repair_round > 0 ? ` · repair round ${trace.repair_round}` : "";
  out.line(`asked for ${parameters(trace.request)}${round} · ${trace.created_at}`);
  out.line("");
  for (const message of trace.request.messages) section(out, message.role, message.content);
  const finish = trace.response.finish_reason ?? "not given";
  section(out, `answer (finish: ${finish})`, trace.response.text);
  if (trace.response.reasoning) section(out, "reasoning", trace.response.reasoning);
  if (trace.rejected) {
    out.line(out.paint("yellow", "Sent back to the model because:"));
    for (const reason of trace.rejected) out.line(`  - ${reason}`);
    out.line("");
  }
  const failed = trace.attempts.filter((a) => a.error !== undefined);
  out.line(
    `${trace.attempts.length === 1 ? "1 attempt" : `${trace.attempts.length} attempts`}${failed.length ? `, ${failed.length} failed:` : ""}`,
  );
  for (const a of failed) out.line(`  ${a.attempt}: ${a.error}`);
}

export const traceCommand: Command = {
  name: "trace",
  summary: "Print one LLM call of a commit: its messages, parameters, answer and attempts.",
  usage: "stackvm trace TASK COMMIT N [--json]     (N counts the commit's LLM calls from 0)",
  options: { ...JSON_OPTION },
  args: ["TASK", "COMMIT", "N"],
  async run(ctx, v, [taskId, commitId, n]) {
    if (!/^\d{1,4}$/.test(n!)) {
      throw usage(
        `N must be the call's place in the commit's LLM calls, from 0 (\`stackvm log ${taskId}\` lists them), got '${n}'`,
      );
    }
    const trace = await ctx.client.request<LlmCallTrace>(
      "GET",
      `/v1/tasks/${id(taskId!)}/commits/${id(commitId!)}/llm-calls/${n}`,
    );
    if (v.json) return printJson(ctx.out, trace);
    printTrace(ctx.out, trace);
    return EXIT.ok;
  },
};

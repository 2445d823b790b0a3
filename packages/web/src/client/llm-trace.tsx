/** @jsxImportSource hono/jsx/dom */
/**
 * One LLM call's trace, opened beside the call in a commit: the messages as a
 * conversation, the answer, why an answer was sent back, and the attempts. Long
 * prompts and JSON are folded (details/summary) so the conversation reads first.
 */
import type { LlmCallTrace } from "@stackvm/core";
import { seg } from "./api";
import { count, ms } from "./format";
import { JsonView } from "./json-view";
import { ErrorBox, useApi, useLoad } from "./ui";

/** Text longer than this is folded behind its first line. */
const FOLD_CHARS = 600;

/** The text as JSON, when it is a JSON object or array (an answer, a plan sent back). */
function asJson(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

function firstLine(text: string): string {
  const line = text.trim().split("\n", 1)[0] ?? "";
  return line.length > 100 ? `${line.slice(0, 100)}…` : line;
}

function MessageBody(props: { text: string }) {
  const { text } = props;
  const json = asJson(text);
  if (json !== undefined) {
    return (
      <details class="llm-fold">
        <summary>JSON ({count(text.length)} characters)</summary>
        <JsonView value={json} />
      </details>
    );
  }
  if (text.length > FOLD_CHARS) {
    return (
      <details class="llm-fold">
        <summary>
          {firstLine(text)} <span class="muted">({count(text.length)} characters)</span>
        </summary>
        <pre class="llm-text">{text}</pre>
      </details>
    );
  }
  return <pre class="llm-text">{text}</pre>;
}

/** What the call asked for: the format, temperature, max tokens. */
function parameters(request: LlmCallTrace["request"]): string {
  const format = request.response_format as { json_schema?: { name?: string } } | undefined;
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

export function LlmTraceView(props: { taskId: string; commitId: string; n: number }) {
  const api = useApi();
  const loaded = useLoad(
    () =>
      api.get<LlmCallTrace>(
        `/v1/tasks/${seg(props.taskId)}/commits/${seg(props.commitId)}/llm-calls/${props.n}`,
      ),
    [props.taskId, props.commitId, props.n],
  );
  if (loaded.error) return <ErrorBox error={loaded.error} title="No trace for this call" />;
  if (!loaded.data) return <p class="muted">Loading the call…</p>;
  const trace = loaded.data;
  const failed = trace.attempts.filter((a) => a.error !== undefined);
  return (
    <div class="llm-trace">
      <p class="small muted">
        Asked for {parameters(trace.request)}
        {trace.repair_round > 0 ? ` · repair round ${trace.repair_round}` : ""} · finish{" "}
        {trace.response.finish_reason ?? "not given"} ·{" "}
        {trace.attempts.length === 1 ? "1 attempt" : `${trace.attempts.length} attempts`}
      </p>
      <ol class="llm-conversation">
        {trace.request.messages.map((message) => (
          <li class={`llm-msg role-${message.role}`}>
            <span class="llm-role">{message.role}</span>
            <MessageBody text={message.content} />
          </li>
        ))}
        <li class="llm-msg role-answer">
          <span class="llm-role">answer</span>
          <MessageBody text={trace.response.text} />
          {trace.response.reasoning ? (
            <details class="llm-fold">
              <summary>Reasoning</summary>
              <pre class="llm-text">{trace.response.reasoning}</pre>
            </details>
          ) : null}
        </li>
      </ol>
      {trace.rejected ? (
        <div class="error-box" role="note">
          <strong>Sent back to the model</strong>
          <ul>
            {trace.rejected.map((reason) => (
              <li>{reason}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {failed.length > 0 ? (
        <ul class="llm-attempts small">
          {failed.map((a) => (
            <li>
              Attempt {a.attempt} failed after {ms(a.latency_ms)}: {a.error}
            </li>
          ))}
        </ul>
      ) : null}
      {trace.request.response_format ? (
        <details class="llm-fold">
          <summary>response_format as sent</summary>
          <JsonView value={trace.request.response_format} />
        </details>
      ) : null}
    </div>
  );
}

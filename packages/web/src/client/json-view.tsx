/** @jsxImportSource hono/jsx/dom */
/**
 * JSON as people read it: indented, with keys, strings, numbers and literals in
 * their own colours, and values stored in S3 shown as a link to their bytes.
 */

const TOKEN =
  /("(?:\\.|[^"\\])*")(\s*:)?|\b(?:true|false|null)\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** Past this size, highlighting costs more than it helps: plain text. */
const HIGHLIGHT_LIMIT = 200_000;

/** Splits pretty JSON into text and classed tokens. */
export function jsonTokens(text: string): Array<string | { cls: string; text: string }> {
  if (text.length > HIGHLIGHT_LIMIT) return [text];
  const out: Array<string | { cls: string; text: string }> = [];
  let last = 0;
  for (const match of text.matchAll(TOKEN)) {
    const index = match.index ?? 0;
    if (index > last) out.push(text.slice(last, index));
    if (match[1] !== undefined) {
      out.push({ cls: match[2] ? "j-key" : "j-str", text: match[1] });
      if (match[2]) out.push(match[2]);
    } else {
      const cls = /^[tfn]/.test(match[0]) ? "j-lit" : "j-num";
      out.push({ cls, text: match[0] });
    }
    last = index + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** A value stored in S3 instead of inline (over 64 KiB). */
interface BlobRef {
  $ref: "s3";
  size: number;
  sha256: string;
  url?: string;
}

const isBlobRef = (value: unknown): value is BlobRef =>
  typeof value === "object" && value !== null && (value as BlobRef).$ref === "s3";

/** Pretty, highlighted JSON. `undefined` shows as an em dash. */
export function JsonView(props: { value: unknown; class?: string }) {
  const { value } = props;
  if (value === undefined) return <span class="muted">—</span>;
  if (isBlobRef(value)) {
    return (
      <p class="blob-ref">
        Stored in S3 ({value.size.toLocaleString("en-US")} bytes, sha256 {value.sha256.slice(0, 12)}
        …)
        {value.url ? (
          <>
            {" "}
            <a href={value.url} target="_blank" rel="noopener noreferrer">
              open
            </a>
          </>
        ) : null}
      </p>
    );
  }
  const text = JSON.stringify(value, null, 2) ?? String(value);
  return (
    <pre class={`json ${props.class ?? ""}`} tabindex={0}>
      {jsonTokens(text).map((token) =>
        typeof token === "string" ? token : <span class={token.cls}>{token.text}</span>,
      )}
    </pre>
  );
}

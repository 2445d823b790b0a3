/** Knowledge through the API as an integrator drives it: multipart uploads, waiting for ingest. */
import type { TestStack } from "./stack";

/** A multipart upload of one document with the stack's key (or `key`). */
export async function uploadDocument(
  t: TestStack,
  kb: string,
  file: { name: string; type: string; bytes: Uint8Array | string },
  options: { extra?: Record<string, string>; key?: string } = {},
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  const bytes = typeof file.bytes === "string" ? file.bytes : new Uint8Array(file.bytes);
  form.append("file", new Blob([bytes], { type: file.type }), file.name);
  for (const [name, value] of Object.entries(options.extra ?? {})) form.append(name, value);
  const response = await fetch(`${t.url}/v1/knowledge-bases/${kb}/documents`, {
    method: "POST",
    headers: { authorization: `Bearer ${options.key ?? t.apiKey}` },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** Polls the knowledge base until no document is pending or ingesting; its documents. */
export async function settledDocuments(t: TestStack, kb: string, key?: string): Promise<any[]> {
  for (let i = 0; i < 600; i++) {
    const { body } = await t.api("GET", `/v1/knowledge-bases/${kb}/documents`, undefined, {
      key: key ?? t.apiKey,
    });
    if (body.documents.every((d: any) => d.status === "ready" || d.status === "failed"))
      return body.documents;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`documents of ${kb} did not settle`);
}

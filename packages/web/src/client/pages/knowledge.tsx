/** @jsxImportSource hono/jsx/dom */
/**
 * Knowledge: the tenant's knowledge bases and, under each, its documents with
 * their ingest progress and per-document errors (`GET /v1/knowledge-bases`,
 * `GET /v1/knowledge-bases/{kb}/documents`). While a document is pending or
 * ingesting, its list reloads every second.
 */
import type { KnowledgeBase, KnowledgeDocument } from "@stackvm/core";
import { useEffect } from "hono/jsx/dom";
import { seg } from "../api";
import { count, when } from "../format";
import { ErrorBox, StatusBadge, useApi, useLoad } from "../ui";
import { UploadForm } from "../upload-form";

/** How far a document's ingest is, in words. */
export function progressText(doc: KnowledgeDocument): string {
  if (doc.status === "ready") return `${count(doc.chunks)} chunks`;
  if (doc.status === "failed" || !doc.progress) return doc.status === "pending" ? "queued" : "";
  const { stage, done, total } = doc.progress;
  return total > 0 ? `${stage} ${done}/${total}` : stage;
}

function Documents(props: { kb: string }) {
  const api = useApi();
  const docs = useLoad(
    () =>
      api.get<{ documents: KnowledgeDocument[] }>(`/v1/knowledge-bases/${seg(props.kb)}/documents`),
    [props.kb],
  );
  const busy = (docs.data?.documents ?? []).some(
    (d) => d.status === "pending" || d.status === "ingesting",
  );
  useEffect(() => {
    if (!busy) return;
    const timer = setTimeout(docs.reload, 1000);
    return () => clearTimeout(timer);
  }, [busy, docs.data]);
  const upload = (
    <UploadForm
      path={`/v1/knowledge-bases/${seg(props.kb)}/documents`}
      label="A document"
      onUploaded={docs.reload}
    />
  );
  if (docs.error) return <ErrorBox error={docs.error} title="Could not load the documents" />;
  const list = docs.data?.documents ?? [];
  if (docs.data && list.length === 0)
    return (
      <>
        {upload}
        <p class="muted small">No documents yet.</p>
      </>
    );
  return (
    <>
      {upload}
      <table class="documents">
        <thead>
          <tr>
            <th scope="col">Document</th>
            <th scope="col">Status</th>
            <th scope="col">Progress</th>
            <th scope="col">Error</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {list.map((doc) => (
            <tr data-document={doc.document_id}>
              <td>
                <strong>{doc.filename}</strong>
                <div class="muted small">
                  <code>{doc.document_id}</code> · {doc.content_type} · {count(doc.size)} bytes
                </div>
              </td>
              <td>
                <StatusBadge status={doc.status} />
              </td>
              <td class="small">{progressText(doc)}</td>
              <td class="small">
                {doc.error ? (
                  <span role="note">
                    <code>{doc.error.code}</code>: {doc.error.message}
                  </span>
                ) : null}
              </td>
              <td class="small">{when(doc.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

export function KnowledgePage() {
  const api = useApi();
  const list = useLoad(
    () => api.get<{ knowledge_bases: KnowledgeBase[] }>("/v1/knowledge-bases"),
    [],
  );
  const bases = list.data?.knowledge_bases ?? [];
  return (
    <section aria-labelledby="kb-title">
      <div class="page-head">
        <h1 id="kb-title">Knowledge</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <p class="muted">
        Documents a plan can search with <code>vector_search</code> and{" "}
        <code>retrieve_knowledge_graph</code>. Upload them here or over the API (docs/knowledge.md).
      </p>
      <ErrorBox error={list.error} title="Could not list the knowledge bases" />
      {list.data && bases.length === 0 ? <p class="card empty">No knowledge bases yet.</p> : null}
      {bases.map((kb) => (
        <article class="card" data-knowledge-base={kb.name}>
          <h2>{kb.name}</h2>
          {kb.description ? <p class="muted">{kb.description}</p> : null}
          <p class="small">
            {count(kb.documents)} documents · {count(kb.chunks)} chunks · created{" "}
            {when(kb.created_at)}
          </p>
          <details open={bases.length === 1}>
            <summary>Documents</summary>
            <Documents kb={kb.name} />
          </details>
        </article>
      ))}
    </section>
  );
}

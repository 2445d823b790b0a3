/** @jsxImportSource hono/jsx/dom */
/**
 * Files: the tenant's uploaded files (`GET /v1/files`), an upload form, and
 * for each the reference a task passes (`{"$file": id}`) and a delete.
 */
import type { FileInfo } from "@stackvm/core";
import { seg } from "../api";
import { count, when } from "../format";
import { ErrorBox, StatusBadge, useApi, useLoad } from "../ui";
import { UploadForm } from "../upload-form";

export function FilesPage() {
  const api = useApi();
  const list = useLoad(() => api.get<{ files: FileInfo[] }>("/v1/files"), []);
  const files = list.data?.files ?? [];
  return (
    <section aria-labelledby="files-title">
      <div class="page-head">
        <h1 id="files-title">Files</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <p class="muted">
        Files a task reads by reference: pass <code>{'{"$file": "file_…"}'}</code> in its inputs,
        and a <code>run_code</code> step gets it in its working folder.
      </p>
      <UploadForm path="/v1/files" label="A file for tasks" onUploaded={list.reload} />
      <ErrorBox error={list.error} title="Could not list the files" />
      {list.data && files.length === 0 ? <p class="card empty">No files yet.</p> : null}
      {files.length > 0 ? (
        <table class="files">
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Status</th>
              <th scope="col">Reference</th>
              <th scope="col">Uploaded</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {files.map((file) => (
              <tr data-file={file.file_id}>
                <td>
                  <strong>{file.filename}</strong>
                  <div class="muted small">
                    {file.content_type} · {count(file.size)} bytes
                  </div>
                </td>
                <td>
                  <StatusBadge status={file.status} />
                </td>
                <td>
                  <code>{`{"$file": "${file.file_id}"}`}</code>
                </td>
                <td class="small">{when(file.created_at)}</td>
                <td>
                  <button
                    type="button"
                    onClick={async () => {
                      await api.delete(`/v1/files/${seg(file.file_id)}`);
                      list.reload();
                    }}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

/** @jsxImportSource hono/jsx/dom */
/**
 * The files a step wrote (`details.files` of `run_code`, `code_task` and code
 * tools: `{path, size, sha256, content_type}`), each with a download, and
 * images shown inline. The bytes come from the task's blob route with the
 * console's key, as an object URL: a plain `<img src>` could not send it.
 */
import { useEffect, useState } from "hono/jsx/dom";
import { seg } from "./api";
import { count } from "./format";
import { useApi } from "./ui";

export interface OutputFile {
  path: string;
  size: number;
  sha256: string;
  content_type?: string;
}

const IMAGE = /^image\/(png|jpeg|gif|webp)$/;

/** The files of a commit's details, when it names any. */
export function outputFiles(details: unknown): OutputFile[] {
  const files = (details as { files?: unknown } | null)?.files;
  if (!Array.isArray(files)) return [];
  return files.filter(
    (f): f is OutputFile =>
      typeof f === "object" &&
      f !== null &&
      typeof (f as OutputFile).path === "string" &&
      typeof (f as OutputFile).sha256 === "string" &&
      /^[0-9a-f]{64}$/.test((f as OutputFile).sha256),
  );
}

function FileRow(props: { taskId: string; file: OutputFile }) {
  const api = useApi();
  const { file } = props;
  const type = file.content_type?.split(";")[0] ?? "application/octet-stream";
  const [url, setUrl] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let made: string | null = null;
    let live = true;
    void api
      .raw(`/v1/tasks/${seg(props.taskId)}/blobs/${file.sha256}?type=${encodeURIComponent(type)}`)
      .then(async (response) => {
        if (!response.ok) throw new Error(`the file could not be read (${response.status})`);
        const blob = await response.blob();
        if (!live) return;
        made = URL.createObjectURL(blob);
        setUrl(made);
      })
      .catch((error: Error) => live && setFailed(error.message));
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [props.taskId, file.sha256]);
  const name = file.path.split("/").pop() ?? file.path;
  return (
    <li data-output-file={file.path}>
      <strong>{file.path}</strong>{" "}
      <span class="muted small">
        {type} · {count(file.size)} bytes
      </span>{" "}
      {url ? (
        <a href={url} download={name}>
          Download
        </a>
      ) : null}
      {failed ? <span class="muted small">{failed}</span> : null}
      {url && IMAGE.test(type) ? (
        <div>
          <img class="output-image" src={url} alt={`${file.path}, written by this step`} />
        </div>
      ) : null}
    </li>
  );
}

export function OutputFiles(props: { taskId: string; files: OutputFile[] }) {
  return (
    <ul class="output-files">
      {props.files.map((file) => (
        <FileRow taskId={props.taskId} file={file} />
      ))}
    </ul>
  );
}

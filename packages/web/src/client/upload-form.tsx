/** @jsxImportSource hono/jsx/dom */
/**
 * One file, uploaded as multipart/form-data with the console's key: to
 * `/v1/files` (a task's files) or a knowledge base's documents. The API checks
 * everything (type, size, name) and its refusal is shown as it answers it.
 */
import { errorOf } from "./api";
import { ActionResult, useAction, useApi } from "./ui";

export function UploadForm(props: {
  /** The route that takes the multipart body. */
  path: string;
  label: string;
  /** Called with the API's answer after a successful upload. */
  onUploaded: (answer: unknown) => void;
}) {
  const api = useApi();
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.querySelector("input[type=file]") as HTMLInputElement | null;
    const file = input?.files?.[0];
    if (!file) return;
    void action.run(async () => {
      const body = new FormData();
      body.append("file", file, file.name);
      const response = await api.raw(props.path, { method: "POST", body });
      if (!response.ok) throw await errorOf(response);
      const answer = await response.json();
      form.reset();
      props.onUploaded(answer);
      return `Uploaded ${file.name}.`;
    });
  };
  return (
    <form class="upload-form" onSubmit={submit}>
      <label>
        {props.label} <input type="file" name="file" required />
      </label>
      <button type="submit" disabled={action.pending}>
        Upload
      </button>
      <ActionResult action={action} title="The upload was refused" />
    </form>
  );
}

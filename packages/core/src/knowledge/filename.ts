/**
 * A file name as a client sent it, made safe to show back. Its own module: the
 * files service (an upload to /v1/files) reads it at every start of the API, and
 * the upload input beside it builds knowledge's schemas, which load on first use.
 */
import { ValidationError } from "../errors";

/** A file name as shown back: no path, no control characters, at most 255 characters. */
export function checkFilename(name: string): string {
  const base = (name ?? "").split(/[\\/]/).pop() ?? "";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  if (clean === "" || clean === "." || clean === "..") {
    throw new ValidationError(
      "invalid_filename",
      'the file part has no file name: send it as filename="notes.md" in its Content-Disposition',
    );
  }
  return clean.slice(0, 255);
}

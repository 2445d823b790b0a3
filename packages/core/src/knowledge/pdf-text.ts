/**
 * A PDF's text, read in a child process with its own limits. pdf.js decodes
 * compressed streams into memory, and a small PDF can make it decode the same
 * large stream for every page: in the shared process that took gigabytes that
 * the other tenants needed, and kept them. The child has a heap cap
 * (`--max-old-space-size`), a resident-memory cap watched from here (the
 * decoded streams live outside the heap, in buffers), a time cap, a page cap and
 * a character cap; past one it is killed, and the PDF fails with that cause.
 * Whatever the child took goes back to the system when it exits.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { ExtractError } from "./extract-error";
import { PDF_CHILD_SOURCE } from "./pdf-child";

/** What reading one PDF may take. */
export interface PdfLimits {
  /** Resident memory of the reading process, in MiB (its heap is capped at half). */
  memoryMb: number;
  /** Wall-clock time, in milliseconds. */
  timeMs: number;
  /** Pages. */
  pages: number;
  /** Characters of text. */
  chars: number;
}

/** The defaults: a quarter of the worker Lambda's 1 GiB, a minute, 2,000 pages, 5 million characters. */
export const DEFAULT_PDF_LIMITS: PdfLimits = {
  memoryMb: 384,
  timeMs: 60_000,
  pages: 2_000,
  chars: 5_000_000,
};

/** How often the child's resident memory is read. */
const WATCH_MS = 50;

/**
 * The text of each page of a PDF, read by a child process within `limits`.
 *
 * @throws ExtractError `pdf_unreadable`, `pdf_too_long`, `document_too_long`,
 *   `pdf_too_large` (memory) or `pdf_too_slow` (time).
 */
export async function pdfPages(bytes: Uint8Array, limits: PdfLimits): Promise<string[]> {
  const child = spawn(
    process.execPath,
    [
      `--max-old-space-size=${Math.max(32, Math.floor(limits.memoryMb / 2))}`,
      "--input-type=module",
      "-e",
      PDF_CHILD_SOURCE,
      unpdfUrl(),
      String(limits.pages),
      String(limits.chars),
    ],
    { stdio: ["pipe", "pipe", "pipe"], env: {} },
  );
  // Enough for the character cap in JSON, escapes and all; more is the child misbehaving.
  const maxOutput = limits.chars * 6 + 1024 * 1024;
  let output = "";
  let stderr = "";
  let stopped: ExtractError | null = null;
  const stop = (error: ExtractError) => {
    stopped ??= error;
    child.kill("SIGKILL");
  };
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (text: string) => {
    output += text;
    if (output.length > maxOutput) stop(tooLarge(limits));
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text: string) => {
    stderr = (stderr + text).slice(-2000);
  });
  const timer = setTimeout(
    () =>
      stop(
        new ExtractError(
          "pdf_too_slow",
          `reading the PDF took longer than ${Math.round(limits.timeMs / 1000)} s, the most one document may take: split it, or export it again (a PDF whose pages share one large stream reads slowly)`,
        ),
      ),
    limits.timeMs,
  );
  const watch = setInterval(() => {
    void residentMb(child.pid).then((mb) => {
      if (mb !== null && mb > limits.memoryMb) stop(tooLarge(limits));
    });
  }, WATCH_MS);
  // The child may die before it has read all of stdin; that is said by its exit, not here.
  child.stdin.on("error", () => {});
  child.stdin.end(bytes);
  const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on("error", () => resolve({ code: null, signal: null }));
    child.on("close", (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(timer);
  clearInterval(watch);
  if (stopped) throw stopped;
  const line = output.trim().split("\n").pop() ?? "";
  let message: ChildMessage | null = null;
  try {
    message = line ? (JSON.parse(line) as ChildMessage) : null;
  } catch {
    message = null;
  }
  if (message && "pages" in message) return message.pages;
  if (message && "error" in message) throw childError(message.error, limits);
  // No answer: the heap cap aborted it, or it could not start.
  if (/heap out of memory|allocation failed/i.test(stderr)) throw tooLarge(limits);
  throw new Error(
    `the PDF reader exited (${exit.signal ?? `code ${exit.code}`}) without an answer: ${stderr.slice(-300)}`,
  );
}

type ChildMessage =
  | { pages: string[] }
  | { error: { code: string; detail?: string; pages?: number; chars?: number; page?: number } };

function childError(
  error: { code: string; detail?: string; pages?: number; page?: number },
  limits: PdfLimits,
): ExtractError {
  switch (error.code) {
    case "pdf_too_long":
      return new ExtractError(
        "pdf_too_long",
        `the PDF has ${error.pages} pages, over the ${limits.pages} one document may have: split it`,
      );
    case "document_too_long":
      return new ExtractError(
        "document_too_long",
        `the PDF gives more than ${limits.chars.toLocaleString("en-US")} characters of text by page ${error.page}, over what one document may hold: split it into several documents`,
      );
    default:
      return new ExtractError(
        "pdf_unreadable",
        `the PDF cannot be read (${error.detail ?? "unknown error"}): check that the file is complete, or export it again`,
      );
  }
}

function tooLarge(limits: PdfLimits): ExtractError {
  return new ExtractError(
    "pdf_too_large",
    `reading the PDF took more than ${limits.memoryMb} MiB of memory, the most one document may take (its compressed streams decode to more than that): split it, or export it again without repeated content`,
  );
}

/** Resident memory of a process in MiB, from /proc (Linux, as on Lambda); null where there is none. */
async function residentMb(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Where unpdf is, resolved from here: the child starts elsewhere, and on Lambda
 * unpdf is installed beside the bundle rather than bundled.
 */
function unpdfUrl(): string {
  try {
    return import.meta.resolve("unpdf");
  } catch {
    return "unpdf";
  }
}

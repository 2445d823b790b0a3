/**
 * The parts of the sandbox protocol a step holds before it calls the sandbox:
 * its version, the language, a file of the working folder, the longest code.
 * They stand apart from the rest of the protocol (`protocol.ts`, which
 * re-exports them as schemas), which only the call to the sandbox reads. The
 * schemas are built on first use (`buildOnce`): a worker builds them with the
 * input of the first tool that runs code, not at its cold start.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";

export const SANDBOX_PROTOCOL_VERSION = 1;

/** The languages the sandbox runs: QuickJS for JavaScript, Pyodide for Python. */
export const SandboxLanguage = buildOnce(() => z.enum(["javascript", "python"]));
export type SandboxLanguage = z.infer<ReturnType<typeof SandboxLanguage>>;

/**
 * A path in the run's working folder: relative, `/`-separated, no `.` or `..`
 * parts, at most 200 characters.
 */
export const SandboxPath = buildOnce(() =>
  z
    .string()
    .min(1)
    .max(200)
    .refine(
      (path) =>
        !path.startsWith("/") &&
        !path.includes("\\") &&
        !path.includes("\0") &&
        path.split("/").every((part) => part !== "" && part !== "." && part !== ".."),
      "a file path is relative to the working folder, '/'-separated, without empty, '.' or '..' parts (e.g. 'out/report.csv')",
    ),
);

/** A file going into or coming out of the working folder. */
export const SandboxFile = buildOnce(() =>
  z
    .object({
      path: SandboxPath(),
      /** `utf8` for text, `base64` for any other bytes. */
      encoding: z.enum(["utf8", "base64"]),
      content: z.string(),
    })
    .strict(),
);
export type SandboxFile = z.infer<ReturnType<typeof SandboxFile>>;

/** The most code one request carries. */
export const MAX_CODE_CHARS = 200_000;

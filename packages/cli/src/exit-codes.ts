/**
 * Exit codes that scripts can trust (documented in docs/cli.md and `stackvm --help`).
 */
export const EXIT = {
  /** The command did what it was asked; `run`: the task completed. */
  ok: 0,
  /** Something unexpected (a bug): the message says what happened. */
  unexpected: 1,
  /** Unknown command or flag, a missing or bad argument. */
  usage: 2,
  /** The API could not be reached, or failed (5xx). */
  unavailable: 3,
  /** No API key, or the key was refused (401, 403). */
  auth: 4,
  /** The task, branch, commit or namespace does not exist (404). */
  notFound: 5,
  /** The API refused the request as given (400, 409, 413, 422, 429). */
  rejected: 6,
  /** `run`: the task ended `failed`. */
  taskFailed: 7,
  /** `run`: the task ended `cancelled`. */
  taskCancelled: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI explains and exits with; `message` says what to do. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    /** Extra lines printed under the message (e.g. each problem of a plan). */
    readonly details: string[] = [],
  ) {
    super(message);
  }
}

/** A usage error: exit code 2, with a pointer to the help. */
export const usage = (message: string, command?: string): CliError =>
  new CliError(
    EXIT.usage,
    `${message}\nRun 'stackvm ${command ? `${command} ` : ""}--help' for usage.`,
  );

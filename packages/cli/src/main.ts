/**
 * The `stackvm` command: dispatches to a command, prints its errors as a sentence
 * that says what to do, and returns an exit code scripts can trust
 * (`exit-codes.ts`, docs/cli.md).
 */
import { createClient } from "./client";
import { type Command, helpText, parseCommand } from "./command";
import { answerCommand } from "./commands/answer";
import { branchesCommand, promoteCommand } from "./commands/branches";
import { continueCommand } from "./commands/continue";
import { doctorCommand } from "./commands/doctor";
import { keyCommands } from "./commands/keys";
import { namespaceCommands } from "./commands/namespace";
import { retryCommand } from "./commands/retry";
import { runCommand, watchCommand } from "./commands/run";
import {
  cancelCommand,
  diffCommand,
  forkCommand,
  logCommand,
  taskCommand,
  tasksCommand,
} from "./commands/tasks";
import { traceCommand } from "./commands/trace";
import { usageCommand } from "./commands/usage";
import { loadCliConfig } from "./config";
import { CliError, EXIT, usage } from "./exit-codes";
import { createOut } from "./style";

export const COMMANDS: Command[] = [
  runCommand,
  watchCommand,
  tasksCommand,
  taskCommand,
  cancelCommand,
  answerCommand,
  logCommand,
  diffCommand,
  forkCommand,
  retryCommand,
  continueCommand,
  traceCommand,
  branchesCommand,
  promoteCommand,
  doctorCommand,
  ...namespaceCommands,
  ...keyCommands,
  usageCommand,
];

const EXIT_HELP = `Exit codes:
  0  success (run: the task completed)     5  not found (404)
  1  unexpected error                       6  request refused (400, 409, 413, 422, 429)
  2  usage error                            7  run: the task failed
  3  API unreachable or failing (5xx),      8  run: the task was cancelled
     or a doctor check failed
  4  no API key, or the key was refused`;

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    "stackvm: turn a goal into a plan and run it step by step on StackVM Serverless.",
    "",
    "Usage: stackvm <command> [options]     (stackvm <command> --help for its options)",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    "",
    "Environment:",
    "  STACKVM_URL        the API (default: the local stack `npm start` runs, found in .stackvm/stack.json,",
    "                     else http://127.0.0.1:$PORT, else http://127.0.0.1:3000)",
    "  STACKVM_API_KEY    your API key (default: .stackvm/api-key, written by `npm start`)",
    "  STACKVM_ADMIN_KEY  the operator key, for `keys create --tenant`",
    "",
    EXIT_HELP,
  ].join("\n");
}

/** Finds the command named by the first one or two words. */
function findCommand(argv: string[]): { command: Command; rest: string[] } {
  const [first, second] = argv;
  const two = COMMANDS.find((c) => c.name === `${first} ${second}`);
  if (two) return { command: two, rest: argv.slice(2) };
  const one = COMMANDS.find((c) => c.name === first);
  if (one) return { command: one, rest: argv.slice(1) };
  const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
  if (group.length) {
    const names = group.map((c) => c.name.split(" ")[1]).join("|");
    throw usage(
      second
        ? `unknown '${first}' command '${second}': use ${first} ${names}`
        : `use ${first} ${names}`,
    );
  }
  throw usage(`unknown command '${first}'`);
}

/** Runs the CLI with these arguments; returns the exit code. */
export async function main(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const out = createOut(process.stdout);
  const err = createOut(process.stderr);
  try {
    if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
      out.line(mainHelp());
      return argv.length === 0 ? EXIT.usage : EXIT.ok;
    }
    const { command, rest } = findCommand(argv);
    const { values, args, help } = parseCommand(command, rest);
    if (help) {
      out.line(helpText(command, out.columns));
      return EXIT.ok;
    }
    const client = createClient(loadCliConfig(env));
    return await command.run({ client, out, err }, values, args);
  } catch (error) {
    out.done();
    if (error instanceof CliError) {
      err.line(`stackvm: ${error.message}`);
      for (const detail of error.details) err.line(`  - ${detail}`);
      return error.exitCode;
    }
    err.line(
      `stackvm: unexpected error: ${(error as Error).stack ?? String(error)}\nThis is a bug: please report it with the command you ran.`,
    );
    return EXIT.unexpected;
  }
}

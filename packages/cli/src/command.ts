/**
 * What a command is: its flags (node's `util.parseArgs`), its help text, and a
 * function that returns the exit code.
 */
import { readFileSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";
import type { Client } from "./client";
import { usage } from "./exit-codes";
import type { Out } from "./style";

export interface Context {
  client: Client;
  out: Out;
  /** stderr, for progress that must not mix into `--json` output. */
  err: Out;
}

/** A flag: what `util.parseArgs` needs plus the line `--help` shows. */
export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
  description: string;
  /** The name of its value in the help text (`<text>`); default: the flag's own name. */
  value?: string;
}
export type Options = Record<string, OptionSpec>;
export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Command {
  /** `run`, or `namespace create` for a subcommand. */
  name: string;
  summary: string;
  /** Usage lines shown by `--help`. */
  usage: string;
  options: Options;
  /** Names of the positional arguments, all required. */
  args: string[];
  run(ctx: Context, values: Values, args: string[]): Promise<number>;
}

/** `--json` on every read command. */
export const JSON_OPTION: Options = {
  json: { type: "boolean", description: "print the API's JSON instead of text" },
};

/** Parses the flags and positionals of a command; mistakes are usage errors (exit 2). */
export function parseCommand(
  command: Command,
  argv: string[],
): { values: Values; args: string[]; help: boolean } {
  const options: NonNullable<ParseArgsConfig["options"]> = {
    help: { type: "boolean", short: "h" },
  };
  for (const [name, { description: _, ...spec }] of Object.entries(command.options)) {
    options[name] = spec;
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw usage((error as Error).message.replace(/\. To specify.*$/s, ""), command.name);
  }
  const values = parsed.values as Values;
  if (values.help) return { values, args: [], help: true };
  const args = parsed.positionals;
  if (args.length < command.args.length) {
    throw usage(`missing ${command.args.slice(args.length).join(" and ")}`, command.name);
  }
  if (args.length > command.args.length) {
    throw usage(`unexpected argument '${args[command.args.length]}'`, command.name);
  }
  return { values, args, help: false };
}

/** Words of `text` in lines of at most `width` columns (a longer word keeps its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

/**
 * The help text of a command, from its options: one flag a line, the
 * descriptions in a column as wide as the longest flag needs, wrapped to the
 * terminal's width.
 */
export function helpText(command: Command, columns = 80): string {
  const lines = [command.summary, "", `Usage: ${command.usage}`];
  const flags: Array<[string, string]> = Object.entries(command.options).map(([name, option]) => {
    const arg = option.type === "string" ? ` <${option.value ?? name.replace(/-/g, "_")}>` : "";
    return [`  --${name}${arg}`, option.description + (option.multiple ? " (repeatable)" : "")];
  });
  flags.push(["  -h, --help", "show this help"]);
  const width = Math.max(...flags.map(([flag]) => flag.length)) + 3;
  lines.push("", "Options:");
  for (const [flag, description] of flags) {
    const [first, ...rest] = wrap(description, Math.max(columns - width, 20));
    lines.push(flag.padEnd(width) + first);
    for (const more of rest) lines.push(" ".repeat(width) + more);
  }
  return lines.join("\n");
}

/** Reads a JSON file given to a flag; a missing file or bad JSON is a usage error. */
export function readJsonFile(path: string, flag: string, command: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw usage(
      `${flag}: cannot read '${path}' (${(error as NodeJS.ErrnoException).code})`,
      command,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usage(`${flag}: '${path}' is not JSON (${(error as Error).message})`, command);
  }
}

/** Parses a JSON flag value; bad JSON is a usage error with an example. */
export function parseJsonFlag(value: string, flag: string, example: string, command: string) {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw usage(`${flag} must be JSON, e.g. ${flag} '${example}'`, command);
  }
}

/** Prints a value as indented JSON; answers the exit code of success. */
export function printJson(out: Out, value: unknown): 0 {
  out.line(JSON.stringify(value, null, 2));
  return 0;
}

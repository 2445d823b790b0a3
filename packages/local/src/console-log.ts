/**
 * The local stack's logger: the same structured fields as Powertools on Lambda,
 * printed as one JSON object per line, or as readable colored lines in a terminal.
 * Long strings are cut so that prompts and large values never flood a log line.
 */
import type { Log } from "@stackvm/core";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const;
export type LogLevel = keyof typeof LEVELS;

const COLORS: Record<string, string> = { debug: "90", info: "36", warn: "33", error: "31" };
/** Fields that never appear in a log line. */
const SECRET = /authorization|api[_-]?key|secret|password|token$/i;

function scrub(value: unknown, maxString: number, depth = 0): unknown {
  if (typeof value === "string") {
    return value.length > maxString
      ? `${value.slice(0, maxString)}… (${value.length} chars)`
      : value;
  }
  if (depth > 4 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => scrub(v, maxString, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      SECRET.test(k) ? "[redacted]" : scrub(v, maxString, depth + 1),
    ]),
  );
}

export interface ConsoleLogOptions {
  level?: LogLevel;
  pretty?: boolean;
  /** Strings longer than this are cut (default 500). */
  maxString?: number;
  write?: (line: string) => void;
}

export function consoleLog(options: ConsoleLogOptions = {}): Log {
  const threshold = LEVELS[options.level ?? "info"];
  const pretty = options.pretty ?? false;
  const maxString = options.maxString ?? 500;
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const emit = (
    level: Exclude<LogLevel, "silent">,
    message: string,
    extra?: Record<string, unknown>,
  ) => {
    if (LEVELS[level] < threshold) return;
    const fields = (extra ? scrub(extra, maxString) : {}) as Record<string, unknown>;
    const timestamp = new Date().toISOString();
    if (!pretty) {
      write(
        JSON.stringify({
          level: level.toUpperCase(),
          message,
          timestamp,
          service: "stackvm",
          ...fields,
        }),
      );
      return;
    }
    const tail = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(" ");
    write(
      `\x1b[90m${timestamp.slice(11, 23)}\x1b[0m \x1b[${COLORS[level]}m${level.padEnd(5)}\x1b[0m ${message} \x1b[90m${tail}\x1b[0m`,
    );
  };
  return {
    debug: (m, e) => emit("debug", m, e),
    info: (m, e) => emit("info", m, e),
    warn: (m, e) => emit("warn", m, e),
    error: (m, e) => emit("error", m, e),
  };
}

/**
 * The settings of `npm start`, read and checked before anything starts: the
 * local ones (port, data folder, log level, worker concurrency, bootstrap key)
 * and, with placeholders for what the local stack provides itself, every
 * setting the functions read (`loadConfig`). All bad settings are named in one
 * `ConfigError`, so that a wrong setting never shows as a stack trace.
 */
import { resolve } from "node:path";
import { ConfigError, loadConfig } from "@stackvm/functions";
import type { LogLevel } from "./console-log";

export interface LocalSettings {
  port: number;
  dataDir: string;
  logLevel: LogLevel;
  concurrency: number;
  bootstrapApiKey: string | null;
}

const LOG_LEVELS: LogLevel[] = ["debug", "info", "warn", "error", "silent"];

/**
 * Reads the settings from `env`; relative folders are taken from `root`.
 *
 * @example
 * const settings = readLocalSettings(process.env, projectRoot); // throws ConfigError naming each bad one
 */
export function readLocalSettings(
  env: Record<string, string | undefined>,
  root: string,
): LocalSettings {
  const problems: string[] = [];
  const whole = (name: string, fallback: number, min: number, max: number): number => {
    const text = env[name];
    if (text === undefined || text === "") return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, not '${text}'`);
      return fallback;
    }
    return value;
  };
  const port = whole("PORT", 3000, 0, 65535);
  const concurrency = whole("STACKVM_WORKER_CONCURRENCY", 4, 1, 64);
  const level = env.LOG_LEVEL ?? "info";
  if (!LOG_LEVELS.includes(level as LogLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, not '${level}'`);
  }
  const key = env.STACKVM_BOOTSTRAP_API_KEY || null;
  if (key !== null && (key.length < 16 || /\s/.test(key))) {
    problems.push(
      "STACKVM_BOOTSTRAP_API_KEY must be at least 16 characters, without spaces (or unset, to have a key made)",
    );
  }
  try {
    loadConfig({
      ...env,
      STACKVM_TABLE: "local",
      STACKVM_QUEUE_URL: "http://127.0.0.1/local",
      STACKVM_BUCKET: "local",
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(error.message.replace(/^bad configuration: /, ""));
  }
  if (problems.length > 0) throw new ConfigError(`bad configuration: ${problems.join("; ")}`);
  return {
    port,
    dataDir: resolve(root, env.STACKVM_DATA_DIR || ".stackvm"),
    logLevel: LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : "info",
    concurrency,
    bootstrapApiKey: key,
  };
}

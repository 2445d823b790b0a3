/** Where the services and the step write what they do. */

/** A structured logger (Powertools' Logger satisfies it). */
export interface Log {
  debug(message: string, extra?: Record<string, unknown>): void;
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

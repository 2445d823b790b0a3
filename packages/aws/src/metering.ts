/**
 * Counting of AWS calls: a middleware added to any SDK v3 client that counts
 * commands by name and the bytes of their serialized request bodies. The
 * benchmark reads it to report DynamoDB reads, writes and bytes per step.
 */

/** Counts since the last reset. */
export interface MeterSnapshot {
  /** Calls per command name (`GetItem`, `PutItem`, `SendMessage`, ...). */
  calls: Record<string, number>;
  /** Request body bytes per command name, as sent over HTTP. */
  requestBytes: Record<string, number>;
  totalCalls: number;
  totalRequestBytes: number;
}

export interface Meter {
  snapshot(): MeterSnapshot;
  reset(): void;
}

type Handler = (args: { request?: unknown }) => Promise<unknown>;
type BuildMiddleware = (next: Handler, context: { commandName?: string }) => Handler;

/** Any SDK v3 client: all have a middleware stack. */
export interface Meterable {
  middlewareStack: object;
}

/** The one overload of `middlewareStack.add` used here (the SDK's overloads do not unify). */
interface BuildStack {
  add(
    middleware: BuildMiddleware,
    options: { step: "build"; name: string; override: boolean },
  ): void;
}

/**
 * Adds a counting middleware to `client` (and so to a DynamoDB document client
 * built on it, which shares its stack). It sits in the build step, before the
 * retry middleware: a command counts once however often the SDK retries it.
 *
 * @example
 * const dynamoMeter = meter(clients.dynamodb);
 * await runStep();
 * dynamoMeter.snapshot(); // { calls: { GetItem: 1, PutItem: 1, UpdateItem: 1 }, ... }
 */
export function meter(client: Meterable): Meter {
  let calls: Record<string, number> = {};
  let requestBytes: Record<string, number> = {};
  (client.middlewareStack as BuildStack).add(
    (next, context) => async (args) => {
      const name = (context.commandName ?? "Unknown").replace(/Command$/, "");
      calls[name] = (calls[name] ?? 0) + 1;
      requestBytes[name] = (requestBytes[name] ?? 0) + bodyBytes(args.request);
      return next(args);
    },
    { step: "build", name: "stackvmMeter", override: true },
  );
  const sum = (counts: Record<string, number>) =>
    Object.values(counts).reduce((total, n) => total + n, 0);
  return {
    snapshot: () => ({
      calls: { ...calls },
      requestBytes: { ...requestBytes },
      totalCalls: sum(calls),
      totalRequestBytes: sum(requestBytes),
    }),
    reset: () => {
      calls = {};
      requestBytes = {};
    },
  };
}

/** The size of a serialized body: a string or bytes, else the declared Content-Length. */
function bodyBytes(request: unknown): number {
  const { body, headers } = (request ?? {}) as {
    body?: unknown;
    headers?: Record<string, string | undefined>;
  };
  if (typeof body === "string") return Buffer.byteLength(body, "utf8");
  if (body instanceof Uint8Array) return body.byteLength;
  const length = Number(headers?.["content-length"] ?? headers?.["Content-Length"]);
  return Number.isFinite(length) ? length : 0;
}

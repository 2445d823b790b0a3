/**
 * A gate in front of an emulator's HTTP server that lets it stop without cutting a
 * request in half. dynalite closes its database once its server has no
 * connection left; a request whose socket was cut meanwhile (a client destroyed,
 * `closeAllConnections`) still runs, writes to the closed database, and dynalite
 * rejects that write where nothing catches it: an unhandled rejection that kills
 * the process (`npm start`) or fails the test run it happened in.
 *
 * Closed, the gate answers every new request 503 (a retryable error the SDK
 * knows) without reaching the emulator, and `close` resolves once the requests
 * already let through have answered, or after `waitMs`.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface RequestGate {
  /** Requests let through and not answered yet. */
  readonly inFlight: number;
  /** Refuses new requests from now on; resolves when none is in flight (or `waitMs` passed). */
  close(waitMs: number): Promise<void>;
}

/**
 * Takes the server's request handlers behind a gate. Call it after the emulator
 * added its handlers and before any other wrapper (`requireSignature`).
 *
 * @example
 * const gate = gateRequests(dynaliteServer);
 * // ... at stop:
 * await gate.close(5_000);
 * dynaliteServer.close();
 */
export function gateRequests(server: Server): RequestGate {
  const handlers = server.listeners("request") as Handler[];
  server.removeAllListeners("request");
  let inFlight = 0;
  let closed = false;
  let drained: (() => void) | null = null;
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (closed) {
      res.writeHead(503, { "content-type": "application/x-amz-json-1.0", connection: "close" });
      res.end(
        JSON.stringify({
          __type: "com.amazonaws.dynamodb.v20120810#ServiceUnavailableException",
          message: "The local stack is stopping.",
        }),
      );
      return;
    }
    inFlight++;
    // `end` is what the emulator calls when it is done, also when the socket is
    // gone (then "finish" never comes): the request's work is over either way.
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    let ended = false;
    res.end = ((...args: unknown[]) => {
      if (!ended) {
        ended = true;
        inFlight--;
        if (inFlight === 0) drained?.();
      }
      return end(...args);
    }) as ServerResponse["end"];
    for (const handler of handlers) handler.call(server, req, res);
  });
  return {
    get inFlight() {
      return inFlight;
    },
    async close(waitMs) {
      closed = true;
      if (inFlight === 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        timer.unref();
        drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}

/**
 * Puts a signature check in front of an emulator's HTTP server: a request that
 * is not signed with the stack's own credentials (`sigv4-check.ts`) is answered
 * 403 and never reaches the emulator, so reaching its port is not enough to
 * read or change any tenant's records.
 *
 * The server's own request handlers are taken off and called after the check.
 * S3's requests (signed for S3 with `x-amz-content-sha256`, or presigned with
 * `UNSIGNED-PAYLOAD`) pass on as they came, streamed. Every other body
 * (DynamoDB's and SQS's JSON, small; their clients declare its hash too) is read
 * and checked against the signed hash, then handed to the emulator in a fresh
 * `IncomingMessage` that replays it.
 */
import { IncomingMessage, type Server, type ServerResponse } from "node:http";
import { declaresPayloadHash, type EmulatorCredentials, signatureProblem } from "./sigv4-check";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Bodies read for hashing: larger ones are refused (dynalite's own limit is 16 MB). */
const MAX_HASHED_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Makes `server` refuse every request not signed with `credentials`' secret.
 * Call it after the emulator added its handlers and before it listens.
 *
 * @example
 * requireSignature(dynaliteServer, credentials);
 */
export function requireSignature(server: Server, credentials: EmulatorCredentials): void {
  const handlers = server.listeners("request") as Handler[];
  server.removeAllListeners("request");
  const pass = (req: IncomingMessage, res: ServerResponse) => {
    for (const handler of handlers) handler.call(server, req, res);
  };
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/";
    if (declaresPayloadHash(url, req.headers)) {
      const problem = signatureProblem(
        { method: req.method ?? "GET", url, headers: req.headers },
        credentials,
        Date.now(),
      );
      if (problem === null) return pass(req, res);
      return refuse(req, res, problem);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_HASHED_BODY_BYTES) {
        refuse(req, res, "the body is too large", 413);
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => {
      if (res.headersSent || res.writableEnded) return;
      const body = Buffer.concat(chunks);
      const problem = signatureProblem(
        { method: req.method ?? "GET", url, headers: req.headers, body },
        credentials,
        Date.now(),
      );
      if (problem !== null) return refuse(req, res, problem);
      pass(replay(req, body), res);
    });
  });
}

/** A request like `req` whose body is `body`, for a handler that reads it again. */
function replay(req: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = new IncomingMessage(req.socket);
  copy.method = req.method;
  copy.url = req.url;
  copy.headers = req.headers;
  copy.rawHeaders = req.rawHeaders;
  copy.httpVersion = req.httpVersion;
  copy.httpVersionMajor = req.httpVersionMajor;
  copy.httpVersionMinor = req.httpVersionMinor;
  copy.complete = true;
  if (body.length > 0) copy.push(body);
  copy.push(null);
  return copy;
}

function refuse(req: IncomingMessage, res: ServerResponse, problem: string, status = 403): void {
  if (res.headersSent) return;
  const message = `refused by the local stack: ${problem}. Only the stack's own clients, signing with the credentials in its data folder, may use its emulators.`;
  const body = JSON.stringify({
    __type: "com.amazon.coral.service#UnrecognizedClientException",
    message,
  });
  res.writeHead(status, {
    "content-type": "application/x-amz-json-1.0",
    "content-length": Buffer.byteLength(body),
    "x-amzn-errortype": "UnrecognizedClientException",
  });
  res.end(body);
  // What is left of the body is not read: drop it with the connection.
  if (!req.complete) req.resume();
}

/**
 * The request id of an answer: the caller's `x-request-id` when it is one that
 * is safe to echo and log, else a new UUID. The caller's value is written on the
 * answer and on every log line of the request, so it is held to 1 to 128
 * visible ASCII characters: a 16 KB value would be copied into each of those, a
 * non-ASCII one arrives as Latin-1 bytes and reads differently in every log
 * tool, and two headers arrive joined as `a, b`. A refused id is not an error:
 * the request goes on under an id of the server's own.
 */
import { randomUUID } from "node:crypto";

/** The longest caller's id kept. */
export const MAX_REQUEST_ID_LENGTH = 128;

const SHAPE = new RegExp(`^[\\x21-\\x7e]{1,${MAX_REQUEST_ID_LENGTH}}$`);

/**
 * @example
 * requestIdOf("req-42") // "req-42"
 * requestIdOf("x".repeat(500)) // a new UUID
 * requestIdOf(undefined) // a new UUID
 */
export function requestIdOf(given: string | undefined): string {
  return given !== undefined && SHAPE.test(given) ? given : randomUUID();
}

/**
 * The ids of a task's commit events (`events.ts`), which are its resume cursor:
 * the commit's time, then for each branch (by internal id) the depth delivered
 * so far. A client reconnects with one as `Last-Event-ID`.
 */
import { MalformedError } from "../errors";
import { parseCommitId } from "../store/keys";

/** For each branch (internal id), the depth of the last commit delivered. */
export type EventCursor = Map<string, number>;

/** Builds the event id of a commit: its time, then the cursor after it. */
export function encodeEventId(createdAt: string, cursor: EventCursor): string {
  const pairs = [...cursor].map(([bid, depth]) => `${bid}-${depth}`);
  return `${createdAt}/${pairs.join(".")}`;
}

/** Reads a `Last-Event-ID` back into a cursor; a foreign id is a 400 that says what to do. */
export function decodeEventId(id: string | null | undefined): EventCursor {
  const cursor: EventCursor = new Map();
  if (!id) return cursor;
  const slash = id.indexOf("/");
  const pairs = slash < 0 ? null : id.slice(slash + 1);
  if (pairs === null || Number.isNaN(Date.parse(id.slice(0, slash)))) throw badId(id);
  for (const pair of pairs ? pairs.split(".") : []) {
    const parsed = parseCommitId(pair);
    if (!parsed) throw badId(id);
    cursor.set(parsed.bid, parsed.depth);
  }
  return cursor;
}

function badId(id: string): MalformedError {
  return new MalformedError(
    `Last-Event-ID '${id.slice(0, 80)}' is not an id this stream sent: reconnect without it to receive every event from the start`,
  );
}

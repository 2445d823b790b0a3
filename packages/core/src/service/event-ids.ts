/**
 * The ids of a task's events (`events.ts`), which are its resume cursor: a
 * time, then for each branch (by internal id) the depth delivered so far, then,
 * once live text was sent, for each writer of text (one LLM call) the last batch
 * sent, and `end` on the id of `event: end`. A client reconnects with the last
 * one it received as `Last-Event-ID`, e.g.
 * `2026-01-01T00:00:01.000Z/k3j9x0aa-4.p0q8w7zz-6/x7f2k9q1-12/end`.
 */
import { MalformedError } from "../errors";
import { parseCommitId } from "../store/keys";

/** For each branch (internal id), the depth of the last commit delivered. */
export type EventCursor = Map<string, number>;

/** For each writer of live text (`token-relay.ts`), the number of the last batch delivered. */
export type TextMarks = Map<string, number>;

/** Where a reconnecting client was: what it received, and whether that was the end. */
export interface ResumePoint {
  cursor: EventCursor;
  texts: TextMarks;
  /** The id was that of `event: end`. */
  ended: boolean;
}

const WRITER_MARK = /^([0-9a-z]{1,16})-(\d{1,9})$/;

/**
 * Builds an event's id: its time, then the cursor after it (and the text sent
 * so far, and whether it ends the stream).
 */
export function encodeEventId(
  createdAt: string,
  cursor: EventCursor,
  extra: { texts?: TextMarks; ended?: boolean } = {},
): string {
  const pairs = [...cursor].map(([bid, depth]) => `${bid}-${depth}`);
  return withTexts(`${createdAt}/${pairs.join(".")}`, extra.texts, extra.ended);
}

/** A commit's id (`time/pairs`, as `encodeEventId` built it) with the text sent so far and the end added. */
export function withTexts(id: string, texts?: TextMarks, ended = false): string {
  let out = id;
  if (texts && texts.size > 0) {
    out += `/${[...texts].map(([writer, n]) => `${writer}-${n}`).join(".")}`;
  }
  return ended ? `${out}/end` : out;
}

/** Reads a `Last-Event-ID` back into a cursor; a foreign id is a 400 that says what to do. */
export function decodeEventId(id: string | null | undefined): EventCursor {
  return decodeResumePoint(id).cursor;
}

/** Reads a `Last-Event-ID` whole: commits, live text and the end; a foreign id is a 400. */
export function decodeResumePoint(id: string | null | undefined): ResumePoint {
  const point: ResumePoint = { cursor: new Map(), texts: new Map(), ended: false };
  if (!id) return point;
  const [time, pairs, ...rest] = id.split("/");
  if (pairs === undefined || time === undefined || Number.isNaN(Date.parse(time))) throw badId(id);
  for (const pair of pairs ? pairs.split(".") : []) {
    const parsed = parseCommitId(pair);
    if (!parsed) throw badId(id);
    point.cursor.set(parsed.bid, parsed.depth);
  }
  if (rest.at(-1) === "end") {
    point.ended = true;
    rest.pop();
  }
  if (rest.length > 1) throw badId(id);
  for (const mark of rest[0]?.split(".") ?? []) {
    const parsed = WRITER_MARK.exec(mark);
    if (!parsed) throw badId(id);
    point.texts.set(parsed[1]!, Number(parsed[2]));
  }
  return point;
}

function badId(id: string): MalformedError {
  return new MalformedError(
    `Last-Event-ID '${id.slice(0, 80)}' is not an id this stream sent: reconnect without it to receive every event from the start`,
  );
}

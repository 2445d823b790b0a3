/**
 * Every message the step queue carries, as one union told apart by `kind`, and
 * the one parser the worker reads a body with.
 *
 * - `step` (`StepMessage`): run the step after `head` (also a group's join and
 *   a waiting branch's wake: those differ by message group and deduplication
 *   id, `vm/enqueue.ts`, not by body). Bodies written before `kind` existed
 *   have none: they are step messages.
 * - `member` (`MemberMessage`): run one member of a parallel group and hold its
 *   result (`vm/member.ts`). Releases before this kind sent a step message with
 *   `member` (and the base as `head`): such a body is read as a member message,
 *   so that one left in a queue across an upgrade still runs its member.
 * - `webhook` (`WebhookMessage`): one attempt of an outgoing webhook.
 * - `ingest` (`IngestMessage`): a knowledge document's ingest, delete or drop.
 *
 * A body no version of the worker can read would fail on every delivery: the
 * parser answers why, with the kind it claimed, so that the worker drops it
 * with a log line instead of retrying it forever or crashing.
 */
import type * as z from "zod";
import { IngestMessage } from "../knowledge/ingest-message";
import { LegacyMemberMessage, MemberMessage, StepMessage, WebhookMessage } from "./message";

/** A message of the step queue, by its `kind`. */
export type QueueMessage = StepMessage | MemberMessage | WebhookMessage | IngestMessage;

/** The kinds of {@link QueueMessage}. */
export type QueueMessageKind = QueueMessage["kind"];

/** A body the worker cannot read: the kind it claimed (else `step`) and what is wrong. */
export interface UnreadableMessage {
  kind: QueueMessageKind;
  issues: z.core.$ZodIssue[];
}

/** A parsed body: the message, or why it cannot be read. */
export type ParsedQueueMessage =
  | { ok: true; message: QueueMessage }
  | ({ ok: false } & UnreadableMessage);

const SCHEMAS = {
  step: StepMessage,
  member: MemberMessage,
  webhook: WebhookMessage,
  // Built with the first ingest message a worker reads, not at its cold start.
  get ingest() {
    return IngestMessage();
  },
};

/**
 * Reads a queue message's body (JSON text) once, by its `kind`.
 *
 * @example
 * const parsed = parseQueueMessage(record.body);
 * if (parsed.ok && parsed.message.kind === "step") await runStep(deps, parsed.message);
 */
export function parseQueueMessage(body: string): ParsedQueueMessage {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    const message = `the body is not JSON (${(error as Error).message}): a queue message is a JSON object with "v": 1 and a "kind"`;
    return { ok: false, kind: "step", issues: [{ code: "custom", path: [], message }] };
  }
  const claimed = (json as { kind?: unknown } | null)?.kind;
  // Anything but a known other kind is read as a step message, whose schema says what is wrong.
  const kind: QueueMessageKind =
    claimed === "webhook" || claimed === "ingest" || claimed === "member" ? claimed : "step";
  if (kind === "step" && typeof json === "object" && json !== null && "member" in json) {
    return legacyMember(json);
  }
  const parsed = SCHEMAS[kind].safeParse(json);
  if (!parsed.success) return { ok: false, kind, issues: parsed.error.issues };
  return { ok: true, message: parsed.data };
}

/** A member message as an earlier release sent it (a step message with `member`), read as one. */
function legacyMember(json: object): ParsedQueueMessage {
  const parsed = LegacyMemberMessage.safeParse(json);
  if (!parsed.success) return { ok: false, kind: "member", issues: parsed.error.issues };
  const { kind: _, head, ...rest } = parsed.data;
  return { ok: true, message: { ...rest, kind: "member", base: head } };
}

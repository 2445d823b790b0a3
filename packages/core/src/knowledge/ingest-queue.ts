/**
 * How the API side sends the ingest queue its messages: in the knowledge base's
 * message group, so that its index has one writer at a time and a document's
 * delete follows any ingest queued before it.
 */
import { randomId } from "../ids";
import type { Queue } from "../ports/queue";
import type { IngestMessage } from "./model";
import { ingestGroup } from "./records";

/**
 * Sends one ingest, delete or drop message. Each send is its own: a document
 * deleted and uploaded again within minutes must not be deduplicated away.
 *
 * @example
 * await sendIngest(queue, { v: 1, kind: "ingest", op: "drop", tenant_id, knowledge_base });
 */
export async function sendIngest(queue: Queue, message: IngestMessage): Promise<void> {
  await queue.send(message, {
    groupId: ingestGroup(message.tenant_id, message.knowledge_base),
    deduplicationId: `kb#${message.op}#${randomId(24)}`,
  });
}

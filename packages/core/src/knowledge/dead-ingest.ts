/**
 * An ingest message that kept failing until the dead-letter queue took it: the
 * knowledge function crashed or timed out on every delivery (its own last
 * attempt never reached the code that records a failure), so the document
 * would stay `pending` or `ingesting` for good. The DLQ consumer records the
 * failure instead, only while the document is still that version and unfinished.
 */
import { isErrorKind } from "../errors";
import type { Clock } from "../ports/clock";
import type { KnowledgeStore } from "../store/knowledge-store";
import type { IngestMessage } from "./model";

/**
 * Marks the message's document `failed` with `ingest_dead_lettered`; true when
 * it did (false: deleted, replaced by a newer upload, or finished meanwhile).
 *
 * @example
 * await failDeadIngest(new KnowledgeStore(items), clock, message, 5);
 */
export async function failDeadIngest(
  knowledge: KnowledgeStore,
  clock: Pick<Clock, "now">,
  message: IngestMessage,
  receives: number | string,
): Promise<boolean> {
  if (message.op !== "ingest") return false;
  const { tenant_id: tenant, knowledge_base: kb, document_id: documentId } = message;
  const record = await knowledge.getDocument(tenant, kb, documentId);
  if (!record || record.version !== message.version) return false;
  if (record.status !== "pending" && record.status !== "ingesting") return false;
  try {
    await knowledge.updateDocument(
      tenant,
      kb,
      documentId,
      {
        set: [
          [["status"], "failed"],
          [
            ["error"],
            {
              code: "ingest_dead_lettered",
              message: `the ingest failed on every delivery (${receives}) without an answer from the knowledge function (it crashed or timed out): upload the document again, or split it if it is large`,
            },
          ],
          [["progress"], null],
          [["updated_at"], new Date(clock.now()).toISOString()],
        ],
      },
      { exists: true, equals: { version: message.version, status: record.status } },
    );
    return true;
  } catch (error) {
    if (isErrorKind(error, "conflict")) return false;
    throw error;
  }
}

/**
 * Messages that kept failing land in the DLQ; this marks their branch `failed`
 * with the reason, so that no branch is left `running` forever.
 */
import {
  type BranchRecord,
  deadLetterReason,
  endDeadLetteredBranch,
  failDeadIngest,
  IngestMessage,
  type KnowledgeStore,
  type Log,
  memberStep,
  parseQueueMessage,
  type TaskStore,
} from "@stackvm/core";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";

export interface DlqDeps {
  store: TaskStore;
  log: Log;
  clock: { now(): number };
  onTerminal?: (branch: BranchRecord) => Promise<void>;
  /** Where documents live: a dead-lettered ingest fails its document (`failDeadIngest`). */
  knowledge?: KnowledgeStore;
}

export function createDlqHandler(deps: DlqDeps) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failures: SQSBatchResponse["batchItemFailures"] = [];
    for (const record of event.Records) {
      try {
        const body: unknown = JSON.parse(record.body);
        if ((body as { kind?: unknown } | null)?.kind === "ingest") {
          // The knowledge function never answered its last delivery: the document
          // would stay ingesting for good.
          const ingest = IngestMessage().safeParse(body);
          const failed =
            ingest.success && deps.knowledge
              ? await failDeadIngest(
                  deps.knowledge,
                  deps.clock,
                  ingest.data,
                  record.attributes.ApproximateReceiveCount,
                )
              : false;
          deps.log.error("document ingest moved to the DLQ", {
            message_id: record.messageId,
            marked: failed,
          });
          continue;
        }
        const parsed = parseQueueMessage(record.body);
        const message = parsed.ok ? parsed.message : null;
        if (message?.kind !== "step" && message?.kind !== "member") {
          deps.log.error("DLQ message is not a step message", { message_id: record.messageId });
          continue;
        }
        // A group member's branch ends as the step after its group's base would.
        const m = message.kind === "member" ? memberStep(message) : message;
        const receives = record.attributes.ApproximateReceiveCount;
        // The last error, as the worker wrote it on the branch (`vm/retrying.ts`).
        const last = (await deps.store.getBranch(m.tenant_id, m.task_id, m.branch))?.retrying;
        const reason = deadLetterReason(m, receives, last?.error.message);
        const branch = await endDeadLetteredBranch(deps.store, m, reason, deps.clock.now());
        deps.log.error("branch failed: step moved to the DLQ", {
          tenant_id: m.tenant_id,
          task_id: m.task_id,
          branch: m.branch,
          parent: m.head,
          marked: branch !== null,
        });
        if (branch && deps.onTerminal) await deps.onTerminal(branch);
      } catch (error) {
        deps.log.error("DLQ record failed", { message_id: record.messageId, error: String(error) });
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  };
}

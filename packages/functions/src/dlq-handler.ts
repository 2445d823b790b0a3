/**
 * Messages that kept failing land in the DLQ; this marks their branch `failed`
 * with the reason, so that no branch is left `running` forever.
 */
import {
  type BranchRecord,
  failDeadIngest,
  IngestMessage,
  type ItemStore,
  isErrorKind,
  type Log,
  StepMessage,
  type TaskStore,
} from "@stackvm/core";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";

export interface DlqDeps {
  store: TaskStore;
  log: Log;
  clock: { now(): number };
  onTerminal?: (branch: BranchRecord) => Promise<void>;
  /** Where documents live: a dead-lettered ingest fails its document (`failDeadIngest`). */
  items?: ItemStore;
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
          const ingest = IngestMessage.safeParse(body);
          const failed =
            ingest.success && deps.items
              ? await failDeadIngest(
                  deps.items,
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
        const parsed = StepMessage.safeParse(body);
        if (!parsed.success) {
          deps.log.error("DLQ message is not a step message", { message_id: record.messageId });
          continue;
        }
        const m = parsed.data;
        const receives = record.attributes.ApproximateReceiveCount;
        // The last error, as the worker wrote it on the branch (`vm/retrying.ts`).
        const last = (await deps.store.getBranch(m.tenant_id, m.task_id, m.branch))?.retrying;
        const cause = last ? `; last error: ${last.error.message}` : "";
        const reason = `the step after ${m.head ?? "the start"} kept failing and was moved to the dead-letter queue (received ${receives} times)${cause}. Retry the task: POST /v1/tasks/${m.task_id}/retry (or stackvm retry ${m.task_id})`;
        const branch = await deps.store
          .updateBranch(
            m.tenant_id,
            m.task_id,
            m.branch,
            {
              set: [
                [["status"], "failed"],
                [["error"], reason],
                [["updated_at"], new Date(deps.clock.now()).toISOString()],
              ],
            },
            { exists: true, equals: { head: m.head } },
          )
          .catch((error: unknown) => {
            if (isErrorKind(error, "conflict")) return null;
            throw error;
          });
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

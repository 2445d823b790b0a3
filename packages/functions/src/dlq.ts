/**
 * Lambda entry of the DLQ consumer: a step that kept failing marks its branch
 * `failed` with the reason, so that no branch stays `running`.
 */
import { systemClock } from "@stackvm/core";
import { awsRuntime } from "./aws-system";
import { createDlqHandler } from "./dlq-handler";

const runtime = awsRuntime();

export const handler = createDlqHandler({
  store: runtime.system.store,
  log: runtime.log,
  clock: systemClock,
  onTerminal: runtime.system.lifecycle.onTerminal,
});

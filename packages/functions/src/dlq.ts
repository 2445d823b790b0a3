/**
 * Lambda entry of the DLQ consumer: a step that kept failing marks its branch
 * `failed` with the reason, so that no branch stays `running`.
 */
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { awsSystem } from "./aws-system";
import { createDlqHandler } from "./dlq-handler";

const runtime = awsSystem();

const metrics = new Metrics({ namespace: "StackVM", serviceName: "dlq" });
const handle = createDlqHandler(runtime.system.dlq);

export const handler: typeof handle = async (event) => {
  metrics.addMetric("DlqArrivals", MetricUnit.Count, event.Records.length);
  try {
    return await handle(event);
  } finally {
    metrics.publishStoredMetrics();
  }
};

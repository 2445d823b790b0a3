/**
 * Where a task's or a schedule's results may be sent: an https URL to a public
 * host, or a loopback or private address that the operator opened
 * (`STACKVM_OPEN_PRIVATE_RANGES`; then http too). The same policy guards the
 * delivery's connection, so a URL accepted when a task is created is one that
 * delivery will try.
 */
import { ValidationError } from "../errors";
import { localUrlProblem, privateTarget } from "./local-url";
import type { OutboundPolicy } from "./outbound-policy";

/**
 * A checker for webhook URLs; `ValidationError` (`bad_webhook_url`) says what is allowed.
 *
 * @example
 * webhookUrlCheck(CLOSED_POLICY)("http://example.com/hook") // throws: webhook_url must be an https URL
 */
export function webhookUrlCheck(policy: OutboundPolicy): (url: string) => void {
  return (raw) => {
    const url = new URL(raw);
    const problem = localUrlProblem(url, policy);
    if (problem !== null) throw new ValidationError("bad_webhook_url", `webhook_url: ${problem}`);
    if (url.protocol === "https:") return;
    if (privateTarget(url) !== null && url.protocol === "http:") return;
    throw new ValidationError(
      "bad_webhook_url",
      "webhook_url must be an https URL (plain http only to a loopback or private address the operator opened with STACKVM_OPEN_PRIVATE_RANGES)",
    );
  };
}

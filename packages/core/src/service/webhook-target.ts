/**
 * A webhook URL checked when it is given (a task, a trigger, a schedule), with
 * the same rules its delivery applies, so that nothing is accepted that delivery
 * will refuse every time: the scheme and host rules of `net/webhook-url.ts`, and,
 * for a host written as an IP address, the address ranges delivery refuses
 * (`net/address-guard.ts`: private, link-local such as the cloud metadata service,
 * loopback outside local mode). A host name is resolved and checked at delivery,
 * since what it resolves to may change.
 */
import ipaddr from "ipaddr.js";
import { ValidationError } from "../errors";
import { forbiddenAddressReason } from "../net/address-guard";
import { webhookUrlCheck } from "../net/webhook-url";

/**
 * A checker for webhook URLs; `ValidationError` (`bad_webhook_url`) says why.
 *
 * @example
 * webhookTargetCheck(false)("https://169.254.169.254/latest") // throws: a link-local address
 */
export function webhookTargetCheck(localMode: boolean): (url: string) => void {
  const scheme = webhookUrlCheck(localMode);
  return (raw) => {
    scheme(raw);
    const host = new URL(raw).hostname.replace(/^\[(.*)\]$/, "$1");
    if (!ipaddr.isValid(host)) return;
    const reason = forbiddenAddressReason(host, { allowLoopback: localMode });
    if (reason === null) return;
    throw new ValidationError(
      "bad_webhook_url",
      `webhook_url points at ${host}, ${reason}: deliveries are never sent there. Give a public https URL${localMode ? ", or a loopback one in local mode" : ""}.`,
    );
  };
}

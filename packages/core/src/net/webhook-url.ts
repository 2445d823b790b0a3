/**
 * Where a task's or a schedule's results may be sent: an https URL to a public
 * host, or a loopback or private address that the operator opened
 * (`STACKVM_OPEN_PRIVATE_RANGES`; then http too). The same policy guards the
 * delivery's connection, so a URL accepted when a task is created is one that
 * delivery will try.
 */
import ipaddr from "ipaddr.js";
import { ValidationError } from "../errors";
import { forbiddenAddressReason } from "./address-guard";
import { normalizeHost } from "./host-allow-list";
import { localUrlProblem, privateTarget, urlPort } from "./local-url";
import type { OutboundPolicy } from "./outbound-policy";
import { systemResolver } from "./resolver";

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

/**
 * How long a check at creation waits for a name to resolve. A name that does
 * not resolve in time (or at all) is accepted: DNS may be down for a moment,
 * and delivery's guard checks every connection anyway.
 */
const RESOLVE_TIMEOUT_MS = 3000;

/**
 * {@link webhookUrlCheck}, then, for a URL that names its host, the addresses
 * that name resolves to now: one that the guard refuses (a private, link-local
 * or metadata address, as `hooks.internal.example` resolving to 10.0.0.5)
 * refuses the URL with 422 before anything is stored, instead of a delivery
 * that could never connect.
 *
 * @example
 * await webhookTargetCheck(policy)("https://hooks.internal.example/x") // throws when it resolves to 10.0.0.5
 */
export function webhookTargetCheck(policy: OutboundPolicy): (url: string) => Promise<void> {
  const checkUrl = webhookUrlCheck(policy);
  const resolve = policy.resolve ?? systemResolver;
  return async (raw) => {
    checkUrl(raw);
    const url = new URL(raw);
    const host = normalizeHost(url.hostname);
    // An IP literal or a loopback name was judged above, without DNS.
    if (ipaddr.isValid(host) || privateTarget(url) !== null) return;
    const addresses = await resolveInTime(resolve, host);
    const port = urlPort(url);
    for (const { address } of addresses ?? []) {
      const reason = forbiddenAddressReason(address, policy, port);
      if (reason === null) continue;
      throw new ValidationError(
        "bad_webhook_url",
        `webhook_url: ${host} resolves to ${address}, which is ${reason}, and delivery refuses to connect to it. Give a URL whose host resolves to public addresses only; a private receiver needs the operator to open its range with STACKVM_OPEN_PRIVATE_RANGES (link-local and metadata addresses never open)`,
        { host, address },
      );
    }
  };
}

/** The name's addresses, or null when it does not resolve within {@link RESOLVE_TIMEOUT_MS}. */
async function resolveInTime(
  resolve: NonNullable<OutboundPolicy["resolve"]>,
  host: string,
): Promise<Awaited<ReturnType<typeof resolve>> | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), RESOLVE_TIMEOUT_MS);
    timer.unref?.();
  });
  try {
    return await Promise.race([resolve(host).catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

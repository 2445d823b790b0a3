/**
 * Early checks of URLs that name this machine or a private network, for the
 * places that store a URL to call later (HTTP tools, MCP servers, webhooks): a
 * URL the guard would refuse at every connection is refused when it is given,
 * with the reason. The guard still checks each connection (a name can resolve
 * anywhere later); this only makes the common mistake clear at once.
 */

import ipaddr from "ipaddr.js";
import { forbiddenAddressReason, isPublicUnicast } from "./address-guard";
import { isLoopbackHost, normalizeHost } from "./host-allow-list";
import type { OutboundPolicy } from "./outbound-policy";

/** The port a URL connects to. */
export function urlPort(url: URL): number {
  return Number(url.port || (url.protocol === "https:" ? 443 : 80));
}

/**
 * The address a URL aims at when it aims at a loopback or private one: its IP
 * literal outside public unicast, or 127.0.0.1 for `localhost` names; null for
 * a public address or any other name.
 */
export function privateTarget(url: URL): string | null {
  const host = normalizeHost(url.hostname);
  if (isLoopbackHost(host) && !ipaddr.isValid(host)) return "127.0.0.1";
  if (!ipaddr.isValid(host)) return null;
  return isPublicUnicast(ipaddr.process(host)) ? null : host;
}

/**
 * Says why the policy refuses the private address a URL aims at, or null (also
 * for every public URL).
 *
 * @example
 * localUrlProblem(new URL("http://127.0.0.1:8000/mcp"), CLOSED_POLICY) // "... is a loopback address ..."
 */
export function localUrlProblem(url: URL, policy: OutboundPolicy): string | null {
  const target = privateTarget(url);
  if (target === null) return null;
  const port = urlPort(url);
  const reason = forbiddenAddressReason(target, policy, port);
  if (reason === null) return null;
  return `${url.host} is ${reason}: a namespace's allowed_hosts cannot open it. Only the operator can open loopback and private addresses (STACKVM_OPEN_PRIVATE_RANGES, see docs/tools.md), and never the stack's own ports or metadata addresses`;
}

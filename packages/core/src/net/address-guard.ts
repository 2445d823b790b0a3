/**
 * Which IP addresses an outgoing request may connect to. Only globally routable
 * unicast addresses pass: loopback, private, link-local (with the cloud metadata
 * address 169.254.169.254), CGNAT, multicast, `0.0.0.0/8`, documentation and other
 * special ranges are refused, also when written as IPv4-mapped IPv6 or in odd IPv4
 * spellings. The operator may open loopback, private and CGNAT ranges
 * (`OutboundPolicy.openRanges`); the stack's own ports on this machine and the
 * metadata addresses stay refused whatever it opens (see `outbound-policy.ts`). The check runs on the addresses a name resolves to, at connect time
 * (see `guardedLookup`), so a name that resolves to a private address, or that
 * re-resolves to one later (DNS rebinding), never gets a connection.
 *
 * ipaddr.js does the parsing and the range table: regexes over addresses are
 * where these guards usually leak.
 */

import type { LookupAddress, LookupOneOptions } from "node:dns";
import type { LookupFunction } from "node:net";
import { networkInterfaces } from "node:os";
import ipaddr from "ipaddr.js";
import { buildOnce } from "../build-once";
import { StepError } from "../errors";
import { isMetadataAddress, isOpened, OPENABLE_RANGES, type OpenRange } from "./outbound-policy";
import type { Resolver } from "./resolver";

/** What the operator opened, and the stack's own ports (see `OutboundPolicy`). */
export interface AddressPolicy {
  openRanges?: readonly OpenRange[];
  ownPorts?: ReadonlySet<number>;
}

/** Why each refused range is refused, in words for the error message. */
const RANGE_NAMES: Record<string, string> = {
  loopback: "a loopback address",
  private: "a private address",
  uniqueLocal: "a private (unique local) address",
  linkLocal: "a link-local address (this includes the cloud metadata service)",
  carrierGradeNat: "a carrier-grade NAT address",
  unspecified: "an unspecified address (0.0.0.0/8 or ::)",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  reserved: "a reserved or documentation address",
};

/**
 * Returns why the address must not be connected to, or null when it may.
 *
 * @example
 * forbiddenAddressReason("::ffff:169.254.169.254") // "a link-local address (...)"
 * forbiddenAddressReason("93.184.215.14") // null
 */
export function forbiddenAddressReason(
  address: string,
  policy: AddressPolicy = {},
  port?: number,
): string | null {
  if (!ipaddr.isValid(address)) return "not an IP address";
  // process() turns IPv4-mapped IPv6 (::ffff:7f00:1) into the IPv4 it carries.
  const ip = ipaddr.process(address);
  const range = ip.range();
  if (isMetadataAddress(ip)) return "a cloud metadata address";
  if (port !== undefined && policy.ownPorts?.has(port) && isThisMachine(ip)) {
    return `one of this stack's own listeners (port ${port} on this machine)`;
  }
  if (isPublicUnicast(ip)) return null;
  if (OPENABLE_RANGES.has(range) && isOpened(ip, policy.openRanges ?? [])) return null;
  if (range === "unicast") return GLOBAL_UNICAST_ONLY;
  return RANGE_NAMES[range] ?? `in the special-purpose range '${range}'`;
}

/** The only IPv6 space handed out for the public internet (RFC 4291, IANA). */
// Parsed on first use, not when the module loads (a worker's cold start).
const globalUnicast = buildOnce(() => ipaddr.IPv6.parseCIDR("2000::/3"));
const GLOBAL_UNICAST_ONLY =
  "an IPv6 address outside the global unicast range 2000::/3 (IPv4-compatible ::a.b.c.d and unassigned space)";

/**
 * True for an address of the public internet: unicast for ipaddr.js and, for
 * IPv6, inside 2000::/3. ipaddr.js calls every IPv6 address outside its table of
 * special ranges unicast, the deprecated IPv4-compatible `::127.0.0.1`
 * (`::7f00:1`, which a host with a SIT tunnel routes to IPv4) included.
 *
 * @example
 * isPublicUnicast(ipaddr.parse("::7f00:1")) // false
 */
export function isPublicUnicast(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (ip.range() !== "unicast") return false;
  return ip.kind() === "ipv4" || (ip as ipaddr.IPv6).match(globalUnicast());
}

/** Loopback, 0.0.0.0/:: (which reach this machine on Linux), or an address of one of its interfaces. */
function isThisMachine(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const range = ip.range();
  if (range === "loopback" || range === "unspecified") return true;
  const text = ip.toString();
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((entry) => ipaddr.process(entry.address.split("%")[0]!).toString() === text),
  );
}

/**
 * Throws `StepError("address_forbidden")` unless the address may be connected to.
 * `host` names what the request asked for, for the message.
 */
export function assertAddressAllowed(
  address: string,
  policy: AddressPolicy,
  host = address,
  port?: number,
): void {
  const reason = forbiddenAddressReason(address, policy, port);
  if (reason === null) return;
  const via = host === address ? "" : ` (${host} resolves to it)`;
  throw new StepError(
    "address_forbidden",
    `refused to connect to ${address}${via}: it is ${reason}. Requests may only go to public internet addresses; a namespace's allowed_hosts cannot open private ones (the operator's STACKVM_OPEN_PRIVATE_RANGES can, never for the stack's own ports or metadata addresses).`,
    { host, address, ...(port === undefined ? {} : { port }) },
  );
}

/**
 * A `lookup` for `http.request` that resolves the name, refuses the connection
 * if ANY resolved address is forbidden, and otherwise hands the addresses to the
 * socket. Refusing on any (not just skipping the bad ones) keeps a name that mixes
 * a public and a private address from being used to reach the private one.
 */
export function guardedLookup(
  resolve: Resolver,
  policy: AddressPolicy,
  port?: number,
): LookupFunction {
  return (hostname, options, callback) => {
    const done = callback as (
      error: Error | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void;
    resolve(hostname)
      .then((resolved) => {
        if (resolved.length === 0) {
          throw new StepError("http_error", `host '${hostname}' has no addresses`, {
            host: hostname,
          });
        }
        for (const entry of resolved) assertAddressAllowed(entry.address, policy, hostname, port);
        const family = familyNumber((options as LookupOneOptions).family);
        const usable = family ? resolved.filter((entry) => entry.family === family) : resolved;
        const first = usable[0];
        if (!first) {
          throw new StepError("http_error", `host '${hostname}' has no IPv${family} address`);
        }
        if ((options as { all?: boolean }).all) done(null, usable);
        else done(null, first.address, first.family);
      })
      .catch((error: unknown) => done(error as Error, ""));
  };
}

function familyNumber(family: LookupOneOptions["family"]): 4 | 6 | undefined {
  if (family === 4 || family === "IPv4") return 4;
  if (family === 6 || family === "IPv6") return 6;
  return undefined;
}

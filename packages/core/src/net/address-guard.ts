/**
 * Which IP addresses an outgoing request may connect to. Only globally routable
 * unicast addresses pass: loopback, private, link-local (with the cloud metadata
 * address 169.254.169.254), CGNAT, multicast, `0.0.0.0/8`, documentation and other
 * special ranges are refused, also when written as IPv4-mapped IPv6 or in odd IPv4
 * spellings. The check runs on the addresses a name resolves to, at connect time
 * (see `guardedLookup`), so a name that resolves to a private address, or that
 * re-resolves to one later (DNS rebinding), never gets a connection.
 *
 * ipaddr.js does the parsing and the range table: regexes over addresses are
 * where these guards usually leak.
 */

import type { LookupAddress, LookupOneOptions } from "node:dns";
import { promises as dns } from "node:dns";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { StepError } from "../errors";

export interface AddressPolicy {
  /**
   * Let loopback addresses (127.0.0.0/8, ::1) through. Only for local mode, for
   * hosts that the caller listed explicitly (a webhook or a demo server on this
   * machine); never on AWS.
   */
  allowLoopback?: boolean;
}

/** Resolves a host name to every address it has (as `dns.lookup` with `all: true`). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

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
export function forbiddenAddressReason(address: string, policy: AddressPolicy = {}): string | null {
  if (!ipaddr.isValid(address)) return "not an IP address";
  // process() turns IPv4-mapped IPv6 (::ffff:7f00:1) into the IPv4 it carries.
  const range = ipaddr.process(address).range();
  if (range === "unicast") return null;
  if (range === "loopback" && policy.allowLoopback) return null;
  return RANGE_NAMES[range] ?? `in the special-purpose range '${range}'`;
}

/**
 * Throws `StepError("address_forbidden")` unless the address may be connected to.
 * `host` names what the request asked for, for the message.
 */
export function assertAddressAllowed(address: string, policy: AddressPolicy, host = address): void {
  const reason = forbiddenAddressReason(address, policy);
  if (reason === null) return;
  const via = host === address ? "" : ` (${host} resolves to it)`;
  throw new StepError(
    "address_forbidden",
    `refused to connect to ${address}${via}: it is ${reason}. Requests may only go to public internet addresses.`,
    { host, address },
  );
}

/** The system resolver (getaddrinfo, so /etc/hosts counts), with every address. */
export const systemResolver: Resolver = async (hostname) => {
  try {
    return await dns.lookup(hostname, { all: true, order: "verbatim" });
  } catch (error) {
    const code = (error as { code?: string }).code ?? "unknown";
    throw new StepError("http_error", `could not resolve host '${hostname}' (${code})`, {
      host: hostname,
    });
  }
};

/**
 * A `lookup` for `http.request` that resolves the name, refuses the connection
 * if ANY resolved address is forbidden, and otherwise hands the addresses to the
 * socket. Refusing on any (not just skipping the bad ones) keeps a name that mixes
 * a public and a private address from being used to reach the private one.
 */
export function guardedLookup(resolve: Resolver, policy: AddressPolicy): LookupFunction {
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
        for (const entry of resolved) assertAddressAllowed(entry.address, policy, hostname);
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

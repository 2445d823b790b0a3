/**
 * Who may open what, for every outgoing request a tenant can aim (tools, HTTP
 * tools, MCP servers, webhooks). A tenant's `allowed_hosts` says which hosts its
 * plans may name; it never opens an address. Loopback, private and
 * carrier-grade NAT addresses open only through the operator's deployment
 * setting (`STACKVM_OPEN_PRIVATE_RANGES`, parsed here), and even then never:
 * - the stack's own listeners (the emulators, the API, the sandbox host, the
 *   Lambda runtime API): their ports on any address of this machine;
 * - link-local addresses (169.254.0.0/16, fe80::/10) and the cloud metadata
 *   addresses, whatever range they sit in;
 * - 0.0.0.0, ::, multicast, broadcast and reserved ranges.
 *
 * Why a deployment setting and no admin route: what lives on the deployment's
 * network is known to whoever deploys it, and a setting cannot be changed by
 * any request to the API, so no bug in a stored-state write can open it.
 */
import ipaddr from "ipaddr.js";
import { buildOnce } from "../build-once";
import { ValidationError } from "../errors";
import type { Resolver } from "./resolver";

/** One range the operator opened, parsed. */
export type OpenRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** What the guard needs to decide one connection, beside the address and port. */
export interface OutboundPolicy {
  /** Loopback, private and CGNAT ranges the operator opened; none by default. */
  openRanges: readonly OpenRange[];
  /**
   * Ports of the stack's own listeners, refused on every address of this
   * machine whatever the ranges say. A live set: the local stack adds the API's
   * port once it listens.
   */
  ownPorts: ReadonlySet<number>;
  /** Name resolution; tests inject one so that nothing leaves the machine. */
  resolve?: Resolver;
}

/** The policy that opens nothing: the default on AWS and locally. */
export const CLOSED_POLICY: OutboundPolicy = { openRanges: [], ownPorts: new Set() };

/** Address ranges an operator may open; everything else private stays refused. */
export const OPENABLE_RANGES = new Set(["loopback", "private", "uniqueLocal", "carrierGradeNat"]);

/**
 * Cloud metadata and host-agent addresses, refused whatever any setting says
 * (on top of every link-local address): EC2's IPv6 IMDS, Alibaba's (in the CGNAT
 * range), Azure's wire server and Oracle's (public ranges).
 */
const METADATA_ADDRESSES = [
  "169.254.169.254",
  "169.254.170.2",
  "fd00:ec2::254",
  "100.100.100.200",
  "168.63.129.16",
  "192.0.0.192",
];

/**
 * AWS's whole IPv6 range for the services of the Nitro host (`fd00:ec2::/32`:
 * IMDS at `::254`, DNS at `::253`, NTP at `::123`, the EKS Pod Identity agent,
 * which hands out credentials, at `::23`). It sits in the unique local range an
 * operator may open, so it is refused by range, not address by address.
 */
const AWS_HOST_SERVICES = "fd00:ec2::/32";

// Parsed on the first check rather than when the module loads: a worker's cold
// start does not pay for ipaddr.js's parser until a step makes a request.
const parsedMetadata = buildOnce(() => ({
  addresses: METADATA_ADDRESSES.map((a) => ipaddr.parse(a).toString()),
  hostServices: ipaddr.IPv6.parseCIDR(AWS_HOST_SERVICES),
}));

/**
 * True for a cloud metadata or host-agent address (`METADATA_ADDRESSES`, AWS's
 * `fd00:ec2::/32`), given processed (IPv4-mapped taken as the IPv4 it carries).
 *
 * @example
 * isMetadataAddress(ipaddr.parse("fd00:ec2::23")) // true
 */
export function isMetadataAddress(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const { addresses, hostServices } = parsedMetadata();
  if (addresses.includes(ip.toString())) return true;
  return ip.kind() === "ipv6" && (ip as ipaddr.IPv6).match(hostServices);
}

/**
 * Parses the operator's setting: IP addresses or CIDR ranges separated by
 * commas or spaces (`127.0.0.1, ::1, 10.0.0.0/8`). `ValidationError` names the
 * entry that is wrong and what to write instead.
 *
 * @example
 * parseOpenRanges("127.0.0.1,10.1.0.0/16") // two ranges
 */
export function parseOpenRanges(text: string | undefined): OpenRange[] {
  const entries = (text ?? "").split(/[\s,]+/).filter(Boolean);
  return entries.map((entry) => {
    let range: OpenRange;
    try {
      if (entry.includes("/")) range = ipaddr.parseCIDR(entry);
      else {
        const address = ipaddr.parse(entry);
        range = [address, address.kind() === "ipv4" ? 32 : 128];
      }
    } catch {
      throw new ValidationError(
        "bad_open_range",
        `STACKVM_OPEN_PRIVATE_RANGES: '${entry}' is not an IP address or CIDR range; write addresses like 127.0.0.1 or ranges like 10.0.0.0/8, separated by commas`,
      );
    }
    // A range that is not loopback or private (0.0.0.0/0, 169.254.0.0/16) would
    // open nothing, or what must never open: say so rather than start.
    // Both ends, not only the address written: 127.0.0.1/1 starts at 0.0.0.0 and
    // would open 10/8 and CGNAT with loopback; ::1/0 every unique local address.
    const [first, last] = rangeEnds(range);
    if (
      !OPENABLE_RANGES.has(range[0].range()) ||
      first.range() !== range[0].range() ||
      last.range() !== range[0].range()
    ) {
      throw new ValidationError(
        "bad_open_range",
        `STACKVM_OPEN_PRIVATE_RANGES: '${entry}' is not inside one loopback, private or carrier-grade NAT range (it starts at ${first.toString()}, which is ${first.range()}, and ends at ${last.toString()}, which is ${last.range()}); only those can be opened (link-local and metadata addresses never can): narrow the prefix, like 10.0.0.0/8 or 127.0.0.0/8`,
      );
    }
    return range;
  });
}

/** The first and last address of a range. */
function rangeEnds([base, bits]: OpenRange): [
  ipaddr.IPv4 | ipaddr.IPv6,
  ipaddr.IPv4 | ipaddr.IPv6,
] {
  const cidr = `${base.toString()}/${bits}`;
  return base.kind() === "ipv4"
    ? [ipaddr.IPv4.networkAddressFromCIDR(cidr), ipaddr.IPv4.broadcastAddressFromCIDR(cidr)]
    : [ipaddr.IPv6.networkAddressFromCIDR(cidr), ipaddr.IPv6.broadcastAddressFromCIDR(cidr)];
}

/** True when the operator opened a range that contains the (processed) address. */
export function isOpened(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly OpenRange[]) {
  return ranges.some(([base, bits]) => {
    if (base.kind() !== address.kind()) return false;
    return address.match([base, bits] as never);
  });
}

/** The Lambda runtime API's port (`AWS_LAMBDA_RUNTIME_API`), one of the stack's own listeners on Lambda. */
export function runtimeApiPort(env: Record<string, string | undefined>): number | null {
  const api = env.AWS_LAMBDA_RUNTIME_API;
  if (!api) return null;
  const port = Number(api.split(":").pop());
  return Number.isInteger(port) && port > 0 ? port : null;
}

/**
 * Loopback opened, as a local developer opens it with
 * `STACKVM_OPEN_PRIVATE_RANGES=127.0.0.0/8,::1` (the test systems use it to call
 * their own servers on this machine).
 */
export const LOOPBACK_OPENED: OutboundPolicy = {
  // Parsed on first read, not when the module loads: a worker's start never reads it.
  get openRanges() {
    return loopbackRanges();
  },
  ownPorts: new Set(),
};
const loopbackRanges = buildOnce(() => parseOpenRanges("127.0.0.0/8, ::1"));

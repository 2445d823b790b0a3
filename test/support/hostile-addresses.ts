/**
 * The addresses the SSRF tests aim at, in one list, so that `http_request`
 * (test/system/tenant-walls.test.ts), `web_fetch` through the stack
 * (test/system/web-tools.test.ts) and `web_fetch` alone
 * (packages/core/src/tools/web/web-fetch.test.ts) are tried with the same
 * spellings: a spelling added here is one every outbound tool must refuse.
 */
import type { LookupAddress } from "node:dns";

/** A public address (example.com's) that the test names resolve beside loopback. */
export const PUBLIC_ADDRESS = "93.184.215.14";

/** Literal spellings of this machine that a URL parser turns into loopback. */
export const LOOPBACK_LITERALS = [
  "127.0.0.1",
  "127.1",
  "0.0.0.0",
  "[::1]",
  "[::ffff:127.0.0.1]",
  "2130706433",
  "0x7f000001",
  "0x7f.0.0.1",
  "0177.0.0.1",
];

/** Every spelling of this machine, literal or a name {@link resolveWallsName} resolves to loopback. */
export const LOOPBACK_SPELLINGS = [
  ...LOOPBACK_LITERALS,
  "localhost",
  "sneaky.walls.test",
  "mapped.walls.test",
  "mixed.walls.test",
];

/** Cloud metadata and private addresses, by literal and by a name {@link resolveWallsName} resolves there. */
export const METADATA_AND_PRIVATE_URLS = [
  "http://169.254.169.254/latest/meta-data/",
  "http://[::ffff:169.254.169.254]/",
  "http://meta.walls.test/",
  "http://10.0.0.1/",
  "http://private.walls.test/",
];

/**
 * The test names, resolved here, never by DNS: loopback, IPv4-mapped loopback,
 * metadata, a private address and a rebinding name (a public address beside
 * loopback; the connection would take either). Anything else is refused, so
 * nothing leaves the machine.
 */
export async function resolveWallsName(hostname: string): Promise<LookupAddress[]> {
  const at = (address: string, family = 4): LookupAddress[] => [{ address, family }];
  if (hostname === "localhost") return [...at("127.0.0.1"), ...at("::1", 6)];
  if (hostname === "sneaky.walls.test") return at("127.0.0.1");
  if (hostname === "mapped.walls.test") return at("::ffff:127.0.0.1", 6);
  if (hostname === "meta.walls.test") return at("169.254.169.254");
  if (hostname === "private.walls.test") return at("10.0.0.1");
  if (hostname === "mixed.walls.test") return [...at(PUBLIC_ADDRESS), ...at("127.0.0.1")];
  throw new Error(`no test address for ${hostname}`);
}

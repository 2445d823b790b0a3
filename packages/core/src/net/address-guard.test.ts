import type { LookupAddress } from "node:dns";
import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";
import { forbiddenAddressReason, guardedLookup } from "./address-guard";
import { LOOPBACK_OPENED, parseOpenRanges } from "./outbound-policy";

describe("forbiddenAddressReason", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["fc00::1", "unique local"],
    ["fd12:3456::1", "unique local"],
    ["169.254.169.254", "metadata"],
    ["fe80::1", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["::", "unspecified"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:a9fe:a9fe", "metadata"],
    ["169.254.1.1", "link-local"],
    ["::ffff:10.0.0.1", "private"],
    ["2002:7f00:1::", "6to4"],
    ["64:ff9b::a9fe:a9fe", "rfc6052"],
    ["not-an-ip", "not an IP address"],
    // IPv4-compatible IPv6 (deprecated ::/96) and other space outside 2000::/3,
    // which ipaddr.js calls plain unicast: a host with a SIT tunnel routes ::7f00:1.
    ["::7f00:1", "outside the global unicast"],
    ["::a9fe:a9fe", "outside the global unicast"],
    ["::2", "outside the global unicast"],
    ["4000::1", "outside the global unicast"],
    ["64:ff9b::7f00:1", "rfc6052"],
    ["2001::1", "teredo"],
    ["192.0.0.8", "reserved"],
    ["198.18.0.1", "reserved"],
    ["240.0.0.1", "reserved"],
  ])("refuses %s (%s)", (address, why) => {
    expect(forbiddenAddressReason(address)).toContain(why);
  });

  it.each(["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])(
    "allows the public address %s",
    (address) => {
      expect(forbiddenAddressReason(address)).toBeNull();
    },
  );

  it("opens only the ranges the operator opened, and only loopback, private or CGNAT ones", () => {
    const policy = { openRanges: parseOpenRanges("127.0.0.0/8, ::1, 10.1.0.0/16") };
    expect(forbiddenAddressReason("127.0.0.1", policy)).toBeNull();
    expect(forbiddenAddressReason("::1", policy)).toBeNull();
    expect(forbiddenAddressReason("::ffff:127.0.0.1", policy)).toBeNull();
    expect(forbiddenAddressReason("10.1.2.3", policy)).toBeNull();
    expect(forbiddenAddressReason("10.2.0.1", policy)).toContain("private");
    expect(forbiddenAddressReason("192.168.1.1", policy)).toContain("private");
  });

  it.each([
    "169.254.169.254",
    "::ffff:169.254.169.254",
    "fd00:ec2::254",
    "100.100.100.200",
    // The rest of AWS's fd00:ec2::/32: the EKS Pod Identity agent (credentials), DNS, NTP.
    "fd00:ec2::23",
    "fd00:ec2::253",
    "fd00:ec2::123",
  ])("refuses the metadata address %s even inside an opened range", (address) => {
    const policy = { openRanges: parseOpenRanges("fc00::/7, 100.64.0.0/10") };
    expect(forbiddenAddressReason(address, policy)).toMatch(/metadata|link-local/);
  });

  it.each(["127.0.0.1", "127.0.0.9", "::1", "0.0.0.0", "::", "::ffff:127.0.0.1"])(
    "refuses the stack's own port on %s whatever is opened",
    (address) => {
      const policy = { ...LOOPBACK_OPENED, ownPorts: new Set([8000]) };
      expect(forbiddenAddressReason(address, policy, 8000)).toContain("own listeners");
      if (address !== "0.0.0.0" && address !== "::") {
        expect(forbiddenAddressReason(address, policy, 8001)).toBeNull();
      }
    },
  );

  it("refuses an own port on this machine's own interface addresses", () => {
    const mine = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry && !entry.internal && entry.family === "IPv4");
    // A machine with loopback only has nothing more to check here (the case above covers it).
    const address = mine?.address ?? "127.0.0.1";
    const policy = { ownPorts: new Set([8000]) };
    expect(forbiddenAddressReason(address, policy, 8000)).toContain("own listeners");
  });
});

describe("parseOpenRanges", () => {
  it.each([
    "0.0.0.0/0",
    "169.254.0.0/16",
    "8.8.8.8",
    "fe80::/10",
    "not-a-range",
    "10.0.0.0/99",
    // A loopback or private base address with a prefix wider than its range:
    // 127.0.0.1/1 would open 10/8 and CGNAT, ::1/0 every unique local address.
    "127.0.0.1/1",
    "10.0.0.0/7",
    "::1/0",
    "fc00::/1",
  ])("refuses %s with the reason", (entry) => {
    expect(() => parseOpenRanges(entry)).toThrow(/STACKVM_OPEN_PRIVATE_RANGES: '/);
  });

  it("reads addresses and ranges separated by commas or spaces", () => {
    expect(parseOpenRanges(" 127.0.0.1, ::1 10.0.0.0/8 ")).toHaveLength(3);
    expect(parseOpenRanges(undefined)).toEqual([]);
  });
});

function lookupWith(addresses: LookupAddress[], options: object) {
  const lookup = guardedLookup(async () => addresses, {});
  return new Promise<{ error: Error | null; address: unknown; family?: number }>((resolve) =>
    lookup(
      "service.example.com",
      options as never,
      ((error: Error | null, address: unknown, family?: number) =>
        resolve({ error, address, family })) as never,
    ),
  );
}

describe("guardedLookup", () => {
  it("refuses a name when any of its addresses is forbidden (rebinding, mixed answers)", async () => {
    const { error } = await lookupWith(
      [
        { address: "93.184.215.14", family: 4 },
        { address: "127.0.0.1", family: 4 },
      ],
      { all: true },
    );
    expect(error).toMatchObject({ code: "address_forbidden" });
    expect(error?.message).toContain("service.example.com resolves to it");
  });

  it("hands every address over when asked for all", async () => {
    const addresses = [
      { address: "93.184.215.14", family: 4 },
      { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
    ];
    const { error, address } = await lookupWith(addresses, { all: true });
    expect(error).toBeNull();
    expect(address).toEqual(addresses);
  });

  it("hands the first address of the asked family over when asked for one", async () => {
    const { address, family } = await lookupWith(
      [
        { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
        { address: "93.184.215.14", family: 4 },
      ],
      { family: 4 },
    );
    expect([address, family]).toEqual(["93.184.215.14", 4]);
  });

  it("fails a name without addresses with http_error", async () => {
    const { error } = await lookupWith([], {});
    expect(error).toMatchObject({ code: "http_error" });
  });
});

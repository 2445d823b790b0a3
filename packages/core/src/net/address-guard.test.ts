import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { forbiddenAddressReason, guardedLookup } from "./address-guard";

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
    ["169.254.169.254", "link-local"],
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
    ["::ffff:a9fe:a9fe", "link-local"],
    ["::ffff:10.0.0.1", "private"],
    ["2002:7f00:1::", "6to4"],
    ["64:ff9b::a9fe:a9fe", "rfc6052"],
    ["not-an-ip", "not an IP address"],
  ])("refuses %s (%s)", (address, why) => {
    expect(forbiddenAddressReason(address)).toContain(why);
  });

  it.each(["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])(
    "allows the public address %s",
    (address) => {
      expect(forbiddenAddressReason(address)).toBeNull();
    },
  );

  it("allows loopback only when the policy says so, and nothing else private", () => {
    expect(forbiddenAddressReason("127.0.0.1", { allowLoopback: true })).toBeNull();
    expect(forbiddenAddressReason("::1", { allowLoopback: true })).toBeNull();
    expect(forbiddenAddressReason("10.0.0.1", { allowLoopback: true })).toContain("private");
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

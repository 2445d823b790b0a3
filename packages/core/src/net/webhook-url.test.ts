import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";
import { CLOSED_POLICY, LOOPBACK_OPENED, parseOpenRanges } from "./outbound-policy";
import { webhookTargetCheck, webhookUrlCheck } from "./webhook-url";

describe("webhookUrlCheck", () => {
  it("accepts https to a public host, and refuses http and loopback when nothing is opened", () => {
    const check = webhookUrlCheck(CLOSED_POLICY);
    expect(() => check("https://hooks.example.com/stackvm")).not.toThrow();
    expect(() => check("http://hooks.example.com/")).toThrow(/webhook_url must be an https URL/);
    for (const url of [
      "https://127.0.0.1/",
      "https://[::1]/",
      "https://localhost/",
      "http://127.1:9000/",
      "http://10.0.0.7/",
      "https://169.254.169.254/",
    ]) {
      expect(() => check(url), url).toThrow(/allowed_hosts cannot open it/);
    }
  });

  it("accepts loopback over http or https once the operator opened it", () => {
    const check = webhookUrlCheck(LOOPBACK_OPENED);
    for (const url of [
      "http://127.0.0.1:9000/hook",
      "http://127.0.0.2/hook",
      "https://[::1]:8443/",
      "http://api.localhost/",
    ]) {
      expect(() => check(url), url).not.toThrow();
    }
    expect(() => check("http://hooks.example.com/")).toThrow(/https URL/);
    expect(() => check("ftp://127.0.0.1/")).toThrow(/https URL/);
    expect(() => check("http://10.0.0.7/")).toThrow(/private address/);
  });

  it("refuses the stack's own ports and metadata addresses whatever is opened", () => {
    const check = webhookUrlCheck({ ...LOOPBACK_OPENED, ownPorts: new Set([4000]) });
    expect(() => check("http://127.0.0.1:4000/")).toThrow(/own listeners/);
    expect(() => check("http://localhost:4000/")).toThrow(/own listeners/);
    expect(() => check("http://169.254.169.254/latest/meta-data/")).toThrow(/metadata/);
  });
});

describe("webhookUrlCheck against spellings of private addresses", () => {
  const check = webhookUrlCheck({ ...CLOSED_POLICY, ownPorts: new Set([4000]) });
  it.each([
    ["decimal IPv4", "https://2130706433/", /127\.0\.0\.1 is a loopback address/],
    ["hex IPv4", "https://0x7f.1/", /127\.0\.0\.1 is a loopback address/],
    ["octal IPv4", "https://0177.0.0.1/", /127\.0\.0\.1 is a loopback address/],
    ["short IPv4", "https://127.1/", /loopback/],
    ["percent-encoded IPv4", "https://%31%32%37.0.0.1/", /loopback/],
    ["a trailing dot", "https://127.0.0.1./", /loopback/],
    ["localhost with a trailing dot", "https://localhost./", /loopback/],
    ["localhost with two trailing dots", "https://localhost../", /loopback/],
    ["a name under localhost", "https://a.b.localhost/", /loopback/],
    ["userinfo before loopback", "https://hooks.example.com@127.0.0.1/", /loopback/],
    ["userinfo with a password", "https://a:b@[::1]/", /loopback/],
    ["IPv4-mapped IPv6", "https://[::ffff:127.0.0.1]/", /loopback/],
    ["IPv4-mapped IPv6, written out", "https://[0:0:0:0:0:ffff:7f00:1]/", /loopback/],
    ["IPv4-compatible IPv6", "https://[::127.0.0.1]/", /outside the global unicast range/],
    ["IPv6 loopback", "https://[::1]/", /loopback/],
    ["IPv6 link-local", "https://[fe80::1]/", /link-local/],
    ["IPv6 unique local", "https://[fd00::1]/", /unique local/],
    ["the unspecified address", "https://0.0.0.0/", /unspecified/],
    ["IPv6 unspecified", "https://[::]/", /unspecified/],
    ["NAT64 of loopback", "https://[64:ff9b::7f00:1]/", /special-purpose range/],
    ["6to4 of loopback", "https://[2002:7f00:1::1]/", /special-purpose range/],
    ["metadata, IPv4-mapped", "https://[::ffff:a9fe:a9fe]/", /metadata/],
    ["AWS metadata over IPv6", "https://[fd00:ec2::254]/", /metadata/],
    ["ECS task metadata", "https://169.254.170.2/", /metadata/],
    ["Alibaba metadata", "https://100.100.100.200/", /metadata/],
    ["multicast", "https://224.0.0.1/", /multicast/],
  ])("refuses %s (%s)", (_what, url, reason) => {
    expect(() => check(url)).toThrow(reason);
  });

  it("reads userinfo as userinfo: the host after the @ is the one judged", () => {
    expect(() => check("https://127.0.0.1@hooks.example.com/")).not.toThrow();
  });
});

describe("webhookTargetCheck", () => {
  /** A resolver that answers from a table and counts its lookups; nothing leaves the machine. */
  const table =
    (names: Record<string, string[]>, asked: string[] = []) =>
    async (host: string) => {
      asked.push(host);
      const addresses = names[host];
      if (!addresses) throw new Error(`ENOTFOUND ${host}`);
      return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    };
  const names = {
    "hooks.internal.example": ["10.0.0.5"],
    "meta.example": ["169.254.169.254"],
    "mixed.example": ["93.184.215.14", "192.168.1.9"],
    "v6.example": ["fd00:ec2::254"],
    "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  };

  it.each([
    ["https://hooks.internal.example/x", "10.0.0.5", /a private address/],
    ["https://meta.example/latest", "169.254.169.254", /metadata/],
    ["https://mixed.example/", "192.168.1.9", /a private address/],
    ["https://v6.example/", "fd00:ec2::254", /metadata/],
  ])(
    "refuses %s, whose name resolves to a refused address, naming it and the fix",
    async (url, address, reason) => {
      const check = webhookTargetCheck({ ...CLOSED_POLICY, resolve: table(names) });
      const refused = check(url);
      await expect(refused).rejects.toMatchObject({ code: "bad_webhook_url" });
      await expect(refused).rejects.toThrow(address);
      await expect(refused).rejects.toThrow(reason);
      await expect(refused).rejects.toThrow(/public addresses only.*STACKVM_OPEN_PRIVATE_RANGES/);
    },
  );

  it("accepts a name that resolves to public addresses only, or that does not resolve now", async () => {
    const check = webhookTargetCheck({ ...CLOSED_POLICY, resolve: table(names) });
    await expect(check("https://public.example/hook")).resolves.toBeUndefined();
    // Delivery's guard checks every connection: an unknown name is not refused at the door.
    await expect(check("https://unknown.example/hook")).resolves.toBeUndefined();
  });

  it("accepts a private name the operator opened, and never a metadata one", async () => {
    const opened = { ...CLOSED_POLICY, openRanges: parseOpenRanges("10.0.0.0/8") };
    const check = webhookTargetCheck({ ...opened, resolve: table(names) });
    await expect(check("https://hooks.internal.example/x")).resolves.toBeUndefined();
    await expect(check("https://meta.example/")).rejects.toThrow(/metadata/);
  });

  it("refuses a name that resolves to this machine's own address on one of the stack's ports, even with its range opened", async () => {
    // An address of one of this machine's interfaces in a range the operator can open
    // (fd00::2 here); loopback where it has none.
    const own =
      Object.values(networkInterfaces())
        .flat()
        .map((entry) => entry?.address.split("%")[0] ?? "")
        .find((address) => /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|f[cd])/.test(address)) ??
      "127.0.0.1";
    const opened = {
      ...CLOSED_POLICY,
      openRanges: parseOpenRanges(`${own}, 127.0.0.0/8`),
      ownPorts: new Set([4000]),
      resolve: table({ "me.example": [own] }),
    };
    const check = webhookTargetCheck(opened);
    await expect(check("https://me.example:4000/hook")).rejects.toThrow(
      /own listeners \(port 4000/,
    );
    await expect(check(`https://${own.includes(":") ? `[${own}]` : own}:4000/`)).rejects.toThrow(
      /own listeners/,
    );
    // Another port of the same address is the operator's to open.
    await expect(check("https://me.example:9443/hook")).resolves.toBeUndefined();
  });

  it("makes the scheme and literal checks first, without a lookup", async () => {
    const asked: string[] = [];
    const check = webhookTargetCheck({ ...CLOSED_POLICY, resolve: table(names, asked) });
    await expect(check("http://public.example/")).rejects.toThrow(/https URL/);
    await expect(check("https://10.0.0.5/")).rejects.toThrow(/private address/);
    expect(asked).toEqual([]);
  });
});

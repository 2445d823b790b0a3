import { describe, expect, it } from "vitest";
import { CLOSED_POLICY, LOOPBACK_OPENED } from "./outbound-policy";
import { webhookUrlCheck } from "./webhook-url";

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

import { describe, expect, it } from "vitest";
import { webhookUrlCheck } from "./webhook-url";

describe("webhookUrlCheck", () => {
  it("accepts https anywhere, and refuses http and loopback outside local mode", () => {
    const check = webhookUrlCheck(false);
    expect(() => check("https://hooks.example.com/stackvm")).not.toThrow();
    for (const url of [
      "http://hooks.example.com/",
      "https://127.0.0.1/",
      "https://[::1]/",
      "https://localhost/",
    ]) {
      expect(() => check(url), url).toThrow(/webhook_url must be an https URL$/);
    }
  });

  it("accepts every loopback host that delivery allows in local mode, over http or https", () => {
    const check = webhookUrlCheck(true);
    for (const url of [
      "http://127.0.0.1:9000/hook",
      "http://127.0.0.2/hook",
      "https://[::1]:8443/",
      "http://api.localhost/",
    ]) {
      expect(() => check(url), url).not.toThrow();
    }
    expect(() => check("http://hooks.example.com/")).toThrow(/loopback URL/);
    expect(() => check("ftp://127.0.0.1/")).toThrow(/loopback URL/);
  });
});

import { describe, expect, it } from "vitest";
import { webhookTargetCheck } from "./webhook-target";

describe("webhookTargetCheck", () => {
  it.each([
    ["https://10.0.0.5/hook", /10\.0\.0\.5, a private address/],
    ["https://169.254.169.254/latest", /link-local address/],
    ["https://[::ffff:a9fe:a9fe]/latest", /link-local address/],
    ["https://192.168.1.20/hook", /private address/],
    ["https://0.0.0.0/hook", /unspecified address/],
    ["https://127.0.0.1/hook", /must be an https URL/],
    ["http://example.com/hook", /must be an https URL/],
  ])("refuses %s outside local mode", (url, reason) => {
    expect(() => webhookTargetCheck(false)(url)).toThrow(reason);
  });

  it.each([
    "https://example.com/hook",
    "https://93.184.215.14/hook",
    "https://hooks.internal.example/x",
  ])("accepts %s (a name is checked again at delivery)", (url) => {
    expect(() => webhookTargetCheck(false)(url)).not.toThrow();
  });

  it("accepts a loopback receiver in local mode and still refuses the metadata service", () => {
    expect(() => webhookTargetCheck(true)("http://127.0.0.1:8080/hook")).not.toThrow();
    expect(() => webhookTargetCheck(true)("https://169.254.169.254/")).toThrow(/bad|link-local/);
  });
});

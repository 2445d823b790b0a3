import { describe, expect, it } from "vitest";
import { hostPatternProblem, isLoopbackHost, matchHost } from "./host-allow-list";

describe("matchHost", () => {
  it.each([
    ["api.example.com", ["api.example.com"], "api.example.com"],
    ["API.Example.com.", ["api.example.com"], "api.example.com"],
    ["a.example.com", ["*.example.com"], "*.example.com"],
    ["a.b.example.com", ["*.example.com"], "*.example.com"],
    ["::1", ["[::1]"], "[::1]"],
    ["[0:0:0:0:0:0:0:1]", ["::1"], "::1"],
  ])("allows %s with %j", (host, patterns, match) => {
    expect(matchHost(host, patterns)).toBe(match);
  });

  it.each([
    ["example.com", ["*.example.com"]],
    ["badexample.com", ["*.example.com"]],
    ["example.com.evil.net", ["example.com"]],
    ["api.example.com", []],
    ["127.0.0.2", ["127.0.0.1"]],
  ])("refuses %s with %j", (host, patterns) => {
    expect(matchHost(host, patterns)).toBeUndefined();
  });
});

describe("isLoopbackHost", () => {
  it("knows loopback in its spellings", () => {
    expect(isLoopbackHost("127.1.2.3")).toBe(true);
    expect(isLoopbackHost("::ffff:127.0.0.1")).toBe(true);
    expect(isLoopbackHost("api.localhost")).toBe(true);
    expect(isLoopbackHost("10.0.0.1")).toBe(false);
  });
});

describe("hostPatternProblem", () => {
  it.each(["api.example.com", "*.example.com", "127.0.0.1", "::1", "[::1]", "my_host.internal"])(
    "accepts %s",
    (pattern) => {
      expect(hostPatternProblem(pattern)).toBeNull();
    },
  );

  it("tells to drop the scheme and path of a URL", () => {
    expect(hostPatternProblem("https://api.example.com/v1")).toContain("'api.example.com'");
  });

  it.each(["exa mple.com", "*", "a..b"])("refuses %j with an example of a host", (pattern) => {
    expect(hostPatternProblem(pattern)).toContain("*.example.com");
  });
});

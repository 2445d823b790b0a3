import { describe, expect, it } from "vitest";
import { buildOnce } from "./build-once";

describe("buildOnce", () => {
  it("builds nothing until the first read, then the same value on every read", () => {
    let builds = 0;
    const value = buildOnce(() => {
      builds += 1;
      return { built: builds };
    });
    expect(builds).toBe(0);
    const first = value();
    expect(value()).toBe(first);
    expect(builds).toBe(1);
  });

  it("keeps a built undefined instead of building again", () => {
    let builds = 0;
    const value = buildOnce(() => {
      builds += 1;
      return undefined;
    });
    value();
    value();
    expect(builds).toBe(1);
  });

  it("builds again after a build that threw", () => {
    let builds = 0;
    const value = buildOnce(() => {
      builds += 1;
      if (builds === 1) throw new Error("first build fails");
      return builds;
    });
    expect(() => value()).toThrow("first build fails");
    expect(value()).toBe(2);
  });
});

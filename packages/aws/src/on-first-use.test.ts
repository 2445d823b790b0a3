import { describe, expect, it } from "vitest";
import { onFirstUse } from "./on-first-use";

interface Greeter {
  greet(name: string): Promise<string>;
  count(): Promise<number>;
}

class Counting implements Greeter {
  calls = 0;
  async greet(name: string) {
    this.calls++;
    return `hello ${name}`;
  }
  async count() {
    return this.calls;
  }
}

describe("onFirstUse", () => {
  it("loads nothing until a method is called, then forwards arguments and `this`", async () => {
    let loads = 0;
    const port = onFirstUse<Greeter>(["greet", "count"], async () => {
      loads++;
      return new Counting();
    });
    expect(loads).toBe(0);
    expect(await port.greet("ada")).toBe("hello ada");
    expect(await port.count()).toBe(1);
    expect(loads).toBe(1);
  });

  it("shares one load among concurrent first calls", async () => {
    let loads = 0;
    const port = onFirstUse<Greeter>(["greet", "count"], async () => {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return new Counting();
    });
    const answers = await Promise.all([port.greet("a"), port.greet("b"), port.count()]);
    expect(answers.slice(0, 2)).toEqual(["hello a", "hello b"]);
    expect(loads).toBe(1);
  });

  it("gives a failed load's error to the caller and tries again on the next call", async () => {
    let loads = 0;
    const port = onFirstUse<Greeter>(["greet", "count"], async () => {
      loads++;
      if (loads === 1) throw new Error("chunk missing");
      return new Counting();
    });
    await expect(port.greet("a")).rejects.toThrow("chunk missing");
    expect(await port.greet("b")).toBe("hello b");
    expect(loads).toBe(2);
  });

  it("passes on the adapter's own errors without loading again", async () => {
    let loads = 0;
    const port = onFirstUse<Greeter>(["greet", "count"], async () => {
      loads++;
      return {
        greet: async () => {
          throw new TypeError("bad name");
        },
        count: async () => 0,
      };
    });
    await expect(port.greet("x")).rejects.toThrow(TypeError);
    await expect(port.greet("y")).rejects.toThrow("bad name");
    expect(loads).toBe(1);
  });
});

import { describe, expect, it } from "vitest";
import { lazyPort } from "./lazy-port";

interface Greeter {
  greet(name: string): Promise<string>;
  count(): Promise<number>;
  /** Optional, as `LlmPort.contextTokens` is: undefined when the adapter cannot say. */
  size?(): Promise<number | undefined>;
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

describe("lazyPort", () => {
  it("loads nothing until a method is called, then forwards arguments and `this`", async () => {
    let loads = 0;
    const port = lazyPort<Greeter>(async () => {
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
    const port = lazyPort<Greeter>(async () => {
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
    const port = lazyPort<Greeter>(async () => {
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
    const port = lazyPort<Greeter>(async () => {
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

  it("forwards a method no list names, and answers undefined for an optional one the adapter lacks", async () => {
    const port = lazyPort<Greeter>(async () => new Counting());
    expect(await port.size?.()).toBeUndefined();
    const sized = lazyPort<Greeter>(async () =>
      Object.assign(new Counting(), { size: async () => 3 }),
    );
    expect(await sized.size?.()).toBe(3);
  });

  it("is not a promise: an async function can return it without loading it", async () => {
    let loads = 0;
    const port = await (async () =>
      lazyPort<Greeter>(async () => {
        loads++;
        return new Counting();
      }))();
    expect(typeof port.greet).toBe("function");
    expect(loads).toBe(0);
  });
});

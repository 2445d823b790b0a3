import {
  DEFAULT_SANDBOX_LIMITS,
  type SandboxRequest,
  type SandboxResponse,
} from "@stackvm/core/sandbox-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxRunner } from "../runner";

// One runner for the file: each run gets a fresh QuickJS instance anyway, which
// the isolation tests below check.
let runner: SandboxRunner;

beforeAll(async () => {
  runner = new SandboxRunner(
    {
      ceiling: { ...DEFAULT_SANDBOX_LIMITS, time_ms: 5_000 },
      network: "none",
      allowNetwork: false,
    },
    { log: () => {} },
  );
  await runner.warm();
});

afterAll(() => runner.close());

function js(code: string, extra: Partial<SandboxRequest> = {}): Promise<SandboxResponse> {
  return runner.handle({ v: 1, language: "javascript", code, ...extra });
}

describe("JavaScript in the sandbox: results and inputs", () => {
  it.each([
    ["the last expression", "const a = 2; a * 21", 42],
    ["a top-level return", "const a = 2;\nreturn a * 21;", 42],
    ["a variable named result", "const result = { ok: true };", { ok: true }],
    ["top-level await", "const v = await Promise.resolve(7); v * 6", 42],
    ["await with result", "const result = await Promise.resolve([1, 2]);", [1, 2]],
    ["nothing (undefined becomes null)", "let x = 1;", null],
  ])("returns %s", async (_, code, expected) => {
    const answer = await js(code);
    expect(answer.error).toBeNull();
    expect(answer.result).toEqual(expected);
  });

  it("binds inputs as variables and keeps every key under inputs", async () => {
    const answer = await js('[rows.length, inputs["not a name"], inputs.class]', {
      inputs: { rows: [1, 2, 3], "not a name": "x", class: "c" },
    });
    expect(answer.result).toEqual([3, "x", "c"]);
  });

  it("prints console output to stdout and stderr", async () => {
    const answer = await js("console.log('a', {b: 1}); console.error('oops'); 1");
    expect(answer.stdout).toBe('a {"b":1}\n');
    expect(answer.stderr).toBe("oops\n");
  });

  it("reads input files and returns only the files it wrote", async () => {
    const answer = await js(
      "files.write('out/sum.txt', String(files.read('in.csv').split(',').map(Number).reduce((a, b) => a + b))); files.write('b.bin', new Uint8Array([0, 255])); files.list()",
      { files: [{ path: "in.csv", encoding: "utf8", content: "1,2,3" }] },
    );
    expect(answer.error).toBeNull();
    expect(answer.result).toEqual(["b.bin", "in.csv", "out/sum.txt"]);
    expect(answer.files).toEqual([
      { path: "out/sum.txt", encoding: "utf8", content: "6", size: 1 },
      { path: "b.bin", encoding: "base64", content: "AP8=", size: 2 },
    ]);
  });

  it.each([
    ["a syntax error", "1 +", "syntax_error"],
    ["an exception", "null.x", "runtime_error"],
    ["a result that is not JSON", "({ n: 1n })", "result_not_json"],
    ["too many files", "for (let i = 0; i < 30; i++) files.write('f' + i, 'x'); 1", "file_limit"],
  ])("answers %s with its code and no result", async (_, code, errorCode) => {
    const answer = await js(code);
    expect(answer.error?.code).toBe(errorCode);
    expect(answer.error?.retryable).toBe(false);
    expect(answer.result).toBeNull();
  });

  it("gives the guest's own stack trace", async () => {
    const answer = await js("function f() { throw new TypeError('bad input') }\nf()");
    expect(answer.error?.message).toBe("TypeError: bad input");
    expect(answer.error?.traceback).toContain("main.js:1");
  });
});

describe("JavaScript in the sandbox: limits", () => {
  it("ends an endless loop at the time limit, then runs the next program", async () => {
    const answer = await js("while (true) {}", { limits: { time_ms: 500 } });
    expect(answer.error?.code).toBe("timeout");
    expect(answer.error?.message).toContain("500 ms");
    expect((await js("1 + 1")).result).toBe(2);
  });

  it("ends a memory bomb at the memory limit, then runs the next program", async () => {
    const answer = await js("const a = []; while (true) a.push(new Array(100000).fill(1));", {
      limits: { memory_mib: 64 },
    });
    expect(answer.error?.code).toBe("memory_limit");
    expect(answer.error?.message).toContain("64 MiB");
    expect((await js("1 + 1")).result).toBe(2);
  });

  it("cuts a flood of output at the output limit and stops the program", async () => {
    const answer = await js("while (true) console.log('flood')", {
      limits: { output_bytes: 4096 },
    });
    expect(answer.error?.code).toBe("output_limit");
    expect(answer.truncated).toBe(true);
    expect(Buffer.byteLength(answer.stdout)).toBe(4096);
    expect(answer.stdout.startsWith("flood\nflood\n")).toBe(true);
    expect((await js("1 + 1")).result).toBe(2);
  });

  it("refuses a result larger than the output limit", async () => {
    const answer = await js("'x'.repeat(5000)", { limits: { output_bytes: 4096 } });
    expect(answer.error?.code).toBe("output_limit");
  });

  it("never gives more than the ceiling, whatever the request asks", async () => {
    const answer = await js("1", { limits: { time_ms: 600_000, memory_mib: 4096 } });
    expect(answer.limits.time_ms).toBe(5_000);
    expect(answer.limits.memory_mib).toBe(DEFAULT_SANDBOX_LIMITS.memory_mib);
  });

  it("survives runaway recursion with a clear error", async () => {
    const answer = await js("function f(n) { return f(n + 1) + 1 } f(0)");
    expect(answer.error?.code).toBe("runtime_error");
    expect(answer.error?.message).toContain("stack overflow");
    expect((await js("1 + 1")).result).toBe(2);
  });
});

describe("JavaScript in the sandbox: escapes fail", () => {
  it.each([
    ["require('fs')", /require.* is not defined/],
    ["require('child_process').execSync('id')", /require.* is not defined/],
    ["process.env", /process.* is not defined/],
    ["fetch('http://127.0.0.1/')", /fetch.* is not defined/],
    ["globalThis.constructor.constructor('return process')()", /process.* is not defined/],
    ["inputs.constructor.constructor('return process')()", /process.* is not defined/],
    ["console.log.constructor('return process')()", /process.* is not defined/],
    ["files.read.constructor('return require')()", /require.* is not defined/],
  ])("%s fails inside the guest", async (code, message) => {
    const answer = await js(code, { inputs: { x: 1 } });
    expect(answer.error?.code).toBe("runtime_error");
    expect(answer.error?.message).toMatch(message);
  });

  it.each([["import('fs')"], ["import('node:child_process')"], ["import('os')"]])(
    "%s cannot load a module",
    async (code) => {
      const answer = await js(`const m = await ${code}; typeof m`);
      expect(answer.error?.code).toBe("runtime_error");
      expect(answer.error?.message).toMatch(/could not load module|not supported|not defined/);
    },
  );

  it("finds only the guest's own globals through injected values' prototypes", async () => {
    const answer = await js(
      `const g = console.log.constructor('return this')();
       const viaInput = Object.getPrototypeOf(rows).constructor.constructor('return this')();
       [g === globalThis, viaInput === globalThis, typeof g.process, typeof g.require, typeof g.Buffer, Object.keys(g).sort()]`,
      { inputs: { rows: [1] } },
    );
    expect(answer.result).toEqual([
      true,
      true,
      "undefined",
      "undefined",
      "undefined",
      ["console", "files", "inputs", "rows"],
    ]);
  });

  it("cannot read the host's files", async () => {
    const traversal = await js("files.read('../../etc/passwd')");
    expect(traversal.error?.message).toMatch(/leaves the working folder/);
    const absolute = await js("files.read('/etc/passwd')");
    expect(absolute.error?.message).toMatch(/leaves the working folder/);
  });

  it("leaves nothing behind for the next run", async () => {
    const first = await js(
      "globalThis.leak = 'x'; Object.prototype.polluted = 1; Array.prototype.push = null; files.write('leak.txt', 'x'); 1",
    );
    expect(first.error).toBeNull();
    const second = await js("[typeof leak, ({}).polluted, typeof [].push, files.list()]");
    expect(second.result).toEqual(["undefined", null, "function", []]);
  });
});

import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createOut } from "./style";

describe("the CLI's output", () => {
  it("writes a right-to-left override in a name as its escape, so the line reads as it is", () => {
    let written = "";
    const stream = new Writable({
      write(chunk, _encoding, done) {
        written += String(chunk);
        done();
      },
    }) as unknown as NodeJS.WriteStream;
    const out = createOut(stream);
    out.line("document invoice\u202efdp.exe ready");
    out.line(JSON.stringify({ name: "x\u2066y" }));
    expect(written).toBe('document invoice\\u202efdp.exe ready\n{"name":"x\\u2066y"}\n');
    expect(JSON.parse(written.split("\n")[1] as string)).toEqual({ name: "x\u2066y" });
  });
});

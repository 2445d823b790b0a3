import { Writable } from "node:stream";
import { styleText } from "node:util";
import { describe, expect, it } from "vitest";
import { neutralizeControls } from "./controls";
import { fit } from "./render";
import { createOut } from "./style";

const ESC = "\u001b";

function capture(tty: boolean) {
  let written = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      written += String(chunk);
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  stream.isTTY = tty;
  return { out: createOut(stream), written: () => written };
}

describe("neutralizeControls", () => {
  it.each([
    ["a screen clear", `${ESC}[2J${ESC}[H`, "\\u001b[2J\\u001b[H"],
    ["a window title (OSC ... BEL)", `${ESC}]0;owned\u0007`, "\\u001b]0;owned\\u0007"],
    ["a clipboard write (OSC 52)", `${ESC}]52;c;b3du\u0007`, "\\u001b]52;c;b3du\\u0007"],
    ["an 8-bit CSI", "\u009b2J", "\\u009b2J"],
    [
      "a carriage return that prints over the line",
      "approved\rREJECTED",
      "approved\\u000dREJECTED",
    ],
    ["a backspace", "ok\u0008\u0008no", "ok\\u0008\\u0008no"],
    ["NUL and DEL", "a\u0000b\u007f", "a\\u0000b\\u007f"],
  ])("writes %s as escapes", (_what, text, shown) => {
    expect(neutralizeControls(text)).toBe(shown);
    expect(neutralizeControls(text, { colours: true })).toBe(shown);
  });

  it("keeps tabs, line feeds and CRLF", () => {
    expect(neutralizeControls("a\tb\nc\r\nd")).toBe("a\tb\nc\r\nd");
  });

  it("keeps the CLI's own colours only when colours are on, and no other SGR", () => {
    const red = styleText("red", "x", { validateStream: false });
    expect(neutralizeControls(red, { colours: true })).toBe(red);
    expect(neutralizeControls(red)).toBe("\\u001b[31mx\\u001b[39m");
    // Concealed text (SGR 8) and black (30) are not colours the CLI paints with.
    expect(neutralizeControls(`${ESC}[8mhidden`, { colours: true })).toBe("\\u001b[8mhidden");
    expect(neutralizeControls(`${ESC}[30m`, { colours: true })).toBe("\\u001b[30m");
  });
});

describe("the CLI's output of hostile text", () => {
  it("escapes controls in lines, streamed text and painted text, keeping its colours on a terminal", () => {
    const saved = process.env.NO_COLOR;
    delete process.env.NO_COLOR;
    try {
      const { out, written } = capture(true);
      out.line(out.paint("yellow", `name ${ESC}]0;x\u0007`));
      out.write(`token ${ESC}[2J`);
      expect(written()).toBe(`${ESC}[33mname \\u001b]0;x\\u0007${ESC}[39m\ntoken \\u001b[2J`);
    } finally {
      if (saved !== undefined) process.env.NO_COLOR = saved;
    }
  });

  it("escapes every control when not a terminal", () => {
    const { out, written } = capture(false);
    out.line(`a${ESC}[31mb`);
    out.write("c\u009bd");
    expect(written()).toBe("a\\u001b[31mb\nc\\u009bd");
  });

  it("keeps JSON output parseable, with the same values", () => {
    const { out, written } = capture(false);
    const value = { title: `a${ESC}[2J\u009b\rb` };
    out.line(JSON.stringify(value));
    expect(written()).not.toContain(ESC);
    expect(written()).not.toContain("\u009b");
    expect(JSON.parse(written())).toEqual(value);
  });

  it("cuts a line by the columns its escapes take", () => {
    const cut = fit(`${ESC}]0;owned\u0007 and more`, 20);
    expect(cut).toBe("\\u001b]0;owned\\u000…");
    expect(cut.length).toBe(20);
  });
});

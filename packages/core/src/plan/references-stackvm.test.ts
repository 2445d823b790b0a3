// biome-ignore-all lint/suspicious/noTemplateCurlyInString: references are written in plain strings
/** `resolveReferences` in StackVM compatibility mode (`{ levels }`), against strict. */
import { describe, expect, it } from "vitest";
import { StepError } from "../errors";
import { lookupVariables, resolveReferences } from "./references";

const lookup = lookupVariables({
  steps: '{"steps": ["a"]}',
  user: { name: "Ada", langs: ["en", "fr"] },
  n: 3,
});

describe("resolveReferences in StackVM compatibility mode", () => {
  it("leaves a reference to a variable that does not exist as its text", () => {
    expect(() => resolveReferences("Hi ${nobody}", lookup)).toThrow(StepError);
    expect(resolveReferences("Hi ${nobody}", lookup, { levels: 0 })).toBe("Hi ${nobody}");
    expect(resolveReferences("${ nobody }", lookup, { levels: 0 })).toBe("${ nobody }");
  });

  it("leaves a dotted reference that does not resolve as its text, and resolves the rest", () => {
    const text = "${steps.steps} by ${user.name}, ${user.age}, ${n.x} (${n})";
    expect(() => resolveReferences(text, lookup)).toThrow(/does not exist/);
    expect(resolveReferences(text, lookup, { levels: 0 })).toBe(
      "${steps.steps} by Ada, ${user.age}, ${n.x} (3)",
    );
    // A whole-string reference that resolves keeps its JSON type, as in strict mode.
    expect(resolveReferences("${user.langs}", lookup, { levels: 0 })).toEqual(["en", "fr"]);
  });

  it("resolves strings only down to `levels`, as the original did", () => {
    const params = { prompt: "${user.name}", context: { nested: "${user.name}" }, list: ["${n}"] };
    expect(resolveReferences(params, lookup)).toEqual({
      prompt: "Ada",
      context: { nested: "Ada" },
      list: [3],
    });
    expect(resolveReferences(params, lookup, { levels: 1 })).toEqual({
      prompt: "Ada",
      context: { nested: "${user.name}" },
      list: ["${n}"],
    });
    expect(resolveReferences(params, lookup, { levels: 0 })).toEqual(params);
  });

  it("still fails on what is not a missing reference (values nested too deep)", () => {
    let deep: unknown = "${n}";
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(() => resolveReferences(deep, lookup, { levels: 100 })).toThrow(/levels deep/);
  });
});

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StepError } from "../errors";
import {
  findReferences,
  type Lookup,
  lookupVariables,
  MAX_VALUE_DEPTH,
  resolveReferences,
} from "./references";

const variables = {
  topic: "tides",
  count: 3,
  ok: true,
  nothing: null,
  facts: [{ title: "Moon", year: 1687 }, { title: "Sun" }],
  user: { name: "Ada", langs: ["en", "fr"], "content-type": "text/plain" },
  sneaky: "${topic}",
};
const lookup = lookupVariables(variables);

function stepError(run: () => unknown): StepError {
  try {
    run();
  } catch (error) {
    if (error instanceof StepError) return error;
    throw error;
  }
  throw new Error("expected a StepError");
}

describe("resolveReferences", () => {
  it.each([
    ["a number", "${count}", 3],
    ["a boolean", "${ok}", true],
    ["null", "${nothing}", null],
    ["an array", "${facts}", variables.facts],
    ["an object", "${user}", variables.user],
    ["spaces inside the braces", "${ count }", 3],
  ])("keeps the JSON type of %s when the reference is the whole string", (_, text, value) => {
    expect(resolveReferences(text, lookup)).toEqual(value);
  });

  it.each([
    ["a string as it is", "About ${topic}.", "About tides."],
    ["a number as JSON", "n=${count}", "n=3"],
    ["an object as compact JSON", "u: ${user.langs}", 'u: ["en","fr"]'],
    ["null as JSON", "${nothing}!", "null!"],
    ["two references side by side", "${topic}${count}", "tides3"],
  ])("writes %s inside longer text", (_, text, value) => {
    expect(resolveReferences(text, lookup)).toBe(value);
  });

  it.each([
    ["an object key", "${user.name}", "Ada"],
    ["an array index then a key", "${facts.0.title}", "Moon"],
    ["a nested index", "${user.langs.1}", "fr"],
    ["a key with a hyphen", "${user.content-type}", "text/plain"],
  ])("follows a path through %s", (_, text, value) => {
    expect(resolveReferences(text, lookup)).toBe(value);
  });

  it("resolves strings at any depth of objects and arrays, and leaves keys alone", () => {
    const value = { "${topic}": [{ deep: ["x ${count}", "${ok}"] }], n: 5 };
    expect(resolveReferences(value, lookup)).toEqual({
      "${topic}": [{ deep: ["x 3", true] }],
      n: 5,
    });
  });

  it("treats \\${ as a literal ${ and removes the backslash", () => {
    expect(resolveReferences("cost: \\${count} vs ${count}", lookup)).toBe("cost: ${count} vs 3");
    expect(resolveReferences("\\${count}", lookup)).toBe("${count}");
  });

  it("leaves a ${ that is not a reference as it is", () => {
    const code = "const s = `${a + b}`; const t = '${}'; const u = '${-x}';";
    expect(resolveReferences(code, lookup)).toBe(code);
  });

  it("does not resolve references inside substituted values", () => {
    expect(resolveReferences("${sneaky}", lookup)).toBe("${topic}");
    expect(resolveReferences("say ${sneaky}", lookup)).toBe("say ${topic}");
  });

  it("keeps a key named __proto__ as a plain key", () => {
    const value = JSON.parse('{"__proto__": {"polluted": "${count}"}}');
    const resolved = resolveReferences(value, lookup) as Record<string, unknown>;
    expect(Object.hasOwn(resolved, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(resolved)).toBe(Object.prototype);
  });

  it("names the reference and the variables that exist when a variable is unknown", () => {
    const error = stepError(() => resolveReferences({ p: "Use ${fatcs.0}" }, lookup));
    expect(error.code).toBe("unknown_reference");
    expect(error.message).toContain("${fatcs.0}");
    expect(error.message).toContain("'fatcs'");
    expect(error.message).toContain("count, facts, nothing, ok, sneaky, topic, user");
  });

  it("says the variable does not exist with a lookup that cannot list names", () => {
    const bare: Lookup = () => ({ found: false });
    const error = stepError(() => resolveReferences("${x}", bare));
    expect(error.code).toBe("unknown_reference");
    expect(error.message).toContain("'x', which does not exist");
  });

  it.each([
    [
      "a missing key, listing the keys",
      "${user.email}",
      "has no key 'email' (it has the keys name, langs, content-type)",
    ],
    ["an index past the end", "${facts.2}", "has 2 item(s), so it has no index 2"],
    ["a key on an array", "${facts.title}", "is an array, so 'title' must be an index"],
    ["a key on a string", "${topic.length}", "topic is string, which has no key 'length'"],
    ["a key on null", "${nothing.x}", "nothing is null"],
  ])("fails on %s", (_, text, why) => {
    const error = stepError(() => resolveReferences(text, lookup));
    expect(error.code).toBe("unknown_reference");
    expect(error.message).toContain(text);
    expect(error.message).toContain(why);
  });

  it("does not follow inherited properties", () => {
    expect(stepError(() => resolveReferences("${user.constructor}", lookup)).code).toBe(
      "unknown_reference",
    );
  });

  it("refuses values nested deeper than the limit", () => {
    let deep: unknown = "${count}";
    for (let i = 0; i < MAX_VALUE_DEPTH; i += 1) deep = [deep];
    expect(() => resolveReferences(deep, lookup)).not.toThrow();
    expect(stepError(() => resolveReferences([deep], lookup)).code).toBe("value_too_deep");
  });

  it("works over a Map of variables too", () => {
    const mapLookup = lookupVariables(new Map([["x", { y: 2 }]]));
    expect(resolveReferences("${x.y}", mapLookup)).toBe(2);
    expect(stepError(() => resolveReferences("${z}", mapLookup)).message).toContain("exist: x.");
  });

  it("returns JSON without references unchanged", () => {
    const noDollar = fc.jsonValue().filter((v) => !JSON.stringify(v).includes("$"));
    fc.assert(
      fc.property(noDollar, (value) => {
        expect(resolveReferences(value, () => ({ found: false }))).toEqual(value);
      }),
    );
  });

  it("substitutes any text value into a template verbatim", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (prefix, text) => {
        const template = `${prefix.replaceAll("$", "")}<\${v}>`;
        const out = resolveReferences(template, lookupVariables({ v: text }));
        expect(out).toBe(`${prefix.replaceAll("$", "")}<${text}>`);
      }),
    );
  });
});

describe("findReferences", () => {
  it("lists every reference with its name, path and location", () => {
    const value = { prompt: "Sum ${a} and ${b.total}", list: ["x", { deep: "${c.0.k}" }] };
    expect(findReferences(value)).toEqual([
      { name: "a", path: [], where: ["prompt"], text: "${a}" },
      { name: "b", path: ["total"], where: ["prompt"], text: "${b.total}" },
      { name: "c", path: ["0", "k"], where: ["list", 1, "deep"], text: "${c.0.k}" },
    ]);
  });

  it("finds a reference in a bare string at an empty location", () => {
    expect(findReferences("${x}")).toEqual([{ name: "x", path: [], where: [], text: "${x}" }]);
  });

  it("skips escapes, object keys and non-references", () => {
    expect(findReferences({ "${key}": "\\${a} `${b + c}` ${}", n: 1, z: null })).toEqual([]);
  });

  it("handles nesting far deeper than recursion would allow", () => {
    let deep: unknown = "${x}";
    for (let i = 0; i < 100_000; i += 1) deep = { a: deep };
    const [found] = findReferences(deep);
    expect(found?.name).toBe("x");
    expect(found?.where).toHaveLength(100_000);
  });

  it("finds exactly the references that resolution needs", () => {
    const names = fc.constantFrom("a", "b", "c");
    const withRefs = fc
      .jsonValue()
      .chain((v) =>
        fc.array(names, { maxLength: 4 }).map((ns) => ({ v, refs: ns.map((n) => `\${${n}}`) })),
      );
    fc.assert(
      fc.property(withRefs, ({ v, refs }) => {
        const value = { v, refs };
        const asked = new Set<string>();
        const tracking: Lookup = (name) => {
          asked.add(name);
          return { found: true, value: 1 };
        };
        resolveReferences(value, tracking);
        expect(new Set(findReferences(value).map((r) => r.name))).toEqual(asked);
      }),
    );
  });
});

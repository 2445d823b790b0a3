/**
 * The step's walk (scripts/step-walk.ts, `npm run walk`): the notes it puts in
 * core's functions, what it counts, and what the walk of a real run says about
 * how the step reads (packages/core/src/vm/ARCHITECTURE.md).
 */
import { transformSync } from "esbuild";
import { describe, expect, it } from "vitest";
import { measure, walkMessages, withNotes } from "../scripts/step-walk";

describe("the step's walk", () => {
  it("notes the file at the start of every function, arrow, method and constructor", () => {
    const source = [
      "export function named(a: number) { return a; }",
      "const arrow = (x: string) => x.length;",
      "class C { constructor(private n: number) {} get size() { return 1; } method() { return [1].map(function inner(v) { return v; }); } }",
    ].join("\n");
    const noted = withNotes(source, "vm/sample.ts");
    expect(noted.match(/globalThis\.__walk\?\.\("vm\/sample\.ts"/g)).toHaveLength(6);
    expect(noted).toContain('__walk?.("vm/sample.ts", "named")');
    // An arrow's expression body becomes a block that returns it.
    expect(noted).toContain('=> { globalThis.__walk?.("vm/sample.ts", ""); return (x.length); }');
    // What it writes is still TypeScript that compiles.
    expect(() => transformSync(noted, { loader: "ts" })).not.toThrow();
  });

  it("counts stays, returns to a file already left, and entries into the group's files", () => {
    const m = measure([
      "vm/step.ts",
      "vm/step.ts",
      "vm/group.ts",
      "vm/group-mark.ts",
      "vm/enqueue.ts",
      "vm/group.ts",
      "vm/step.ts",
      "vm/commit-tail.ts",
    ]);
    expect(m.entries).toBe(8);
    expect(m.stays).toEqual([
      "vm/step.ts",
      "vm/group.ts",
      "vm/group-mark.ts",
      "vm/enqueue.ts",
      "vm/group.ts",
      "vm/step.ts",
      "vm/commit-tail.ts",
    ]);
    expect(m.returns).toBe(2);
    // group.ts then group-mark.ts is one entry into the group; enqueue.ts back to group.ts is another.
    expect(m.intoGroup).toBe(2);
  });

  it("walks a run: runStep once per step message and never for a member, the group's files entered once by an ordinary step", async () => {
    const walked = await walkMessages();
    const ordinary = walked.filter((m) => m.task === "ordinary");
    const members = walked.filter((m) => m.kind === "member");
    expect(ordinary.length).toBeGreaterThan(1);
    expect(members).toHaveLength(3);
    for (const message of walked) {
      expect(message.runSteps, `${message.task} ${message.kind}`).toBe(
        message.kind === "member" ? 0 : 1,
      );
    }
    for (const message of ordinary) expect(measure(message.files).intoGroup).toBe(1);
  });
});

import { describe, expect, it } from "vitest";
import { helpText } from "./command";
import { COMMANDS } from "./main";

/** Where a flag line's description starts; the flag is `--name`, `--name <arg>` or `-h, --help`. */
const FLAG = /^ {2}(-h, )?--[a-z-]+( <[a-z_]+>)?( {2,})/;

describe("helpText", () => {
  it("puts every command's descriptions in one column, at least two spaces after the longest flag", () => {
    for (const command of COMMANDS) {
      const lines = helpText(command, 100).split("Options:\n")[1]!.split("\n");
      const flags = lines.filter((line) => line.startsWith("  -"));
      const starts = flags.map((line) => {
        const match = FLAG.exec(line);
        expect(match, `${command.name}: '${line}'`).not.toBeNull();
        return match![0].length;
      });
      expect(new Set(starts).size, command.name).toBe(1);
      // A wrapped description goes on in the same column.
      for (const line of lines.filter((l) => !l.startsWith("  -"))) {
        expect(line.search(/\S/), `${command.name}: '${line}'`).toBe(starts[0]);
      }
    }
  });

  it("wraps a long description under its column, within the width", () => {
    const command = COMMANDS.find((c) => c.name === "namespace create")!;
    const lines = helpText(command, 56).split("Options:\n")[1]!.split("\n");
    const column = FLAG.exec(lines[0]!)![0].length;
    expect(lines.some((line) => !line.startsWith("  -"))).toBe(true);
    for (const line of lines) {
      expect(line.length, line).toBeLessThanOrEqual(56);
      if (!line.startsWith("  -")) expect(line.search(/\S/), line).toBe(column);
    }
  });
});

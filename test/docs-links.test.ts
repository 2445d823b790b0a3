/**
 * The docs a user reads in the repository can be followed from the repository:
 * every link of the README, `docs/*.md` and the packages' ARCHITECTURE.md is a
 * relative path to a file inside the repository (with a heading there, when it
 * names one) or a public web address, never a path outside the repository, an
 * absolute path, or a local server.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");

const pages = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, "packages"))
    .map((p) => `packages/${p}/ARCHITECTURE.md`)
    .filter((f) => existsSync(join(ROOT, f))),
];

/** Markdown links `[text](target)` outside code blocks and code spans. */
function links(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** The anchors of a page's headings, as GitHub makes them. */
function anchors(text: string): Set<string> {
  const prose = text.replace(/```[\s\S]*?```/g, "");
  return new Set(
    [...prose.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replace(/ /g, "-"),
    ),
  );
}

/** What is wrong with one link of `page`, or null. */
function problem(page: string, target: string): string | null {
  if (/^https?:\/\//.test(target)) {
    const host = new URL(target).hostname;
    return /^(localhost|127\.|0\.0\.0\.0|\[::1\])/.test(host) ? "a local server" : null;
  }
  if (/^[a-z]+:/i.test(target)) return "not a web address or a path";
  if (target.startsWith("/")) return "an absolute path";
  const [path, anchor] = target.split("#") as [string, string | undefined];
  const file = path === "" ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), path);
  const inside = relative(ROOT, file);
  if (inside.startsWith("..")) return "outside the repository";
  if (!existsSync(file)) return "no such file";
  if (anchor && file.endsWith(".md") && !anchors(readFileSync(file, "utf8")).has(anchor)) {
    return `no heading #${anchor} there`;
  }
  return null;
}

describe("the links of the docs", () => {
  it.each(pages)("%s links only to what a reader of the repository can open", (page) => {
    const text = readFileSync(join(ROOT, page), "utf8");
    const wrong = links(text)
      .map((target) => [target, problem(page, target)] as const)
      .filter(([, why]) => why !== null)
      .map(([target, why]) => `${target}: ${why}`);
    expect(wrong).toEqual([]);
    expect(text).not.toMatch(/\.\.\/shared|\/work\/shared/);
  });

  it("finds the links it checks", () => {
    expect(links("see [a](docs/a.md#b) and `[c](d)`")).toEqual(["docs/a.md#b"]);
    expect(problem("README.md", "../shared/spec/plan-language.md")).toBe("outside the repository");
    expect(problem("docs/cli.md", "plan-language.md#references")).toBeNull();
    expect(problem("docs/cli.md", "plan-language.md#no-such-heading")).toMatch(/no heading/);
    expect(problem("README.md", "/etc/passwd")).toBe("an absolute path");
    expect(problem("README.md", "http://localhost:3000/docs")).toBe("a local server");
  });
});

import { describe, expect, it } from "vitest";
import { pageMarkdown, pageShape, READER_LIMITS } from "./page-markdown";

const URL = "https://pages.test/a/b.html";

describe("the page reader", () => {
  it("answers the article as Markdown, links absolute against the page's URL", () => {
    const html = `<html><head><title>T</title></head><body><nav>MENU</nav><article><h2>Part</h2>${"<p>Some long sentence of the article that a reader wants to read today.</p>".repeat(8)}<p><a href="../c">next</a></p></article></body></html>`;
    const page = pageMarkdown(html, URL);
    expect(page.title).toBe("T");
    expect(page.markdown).toContain("## Part");
    expect(page.markdown).toContain("[next](https://pages.test/c)");
    expect(page.markdown).not.toContain("MENU");
  });

  it("keeps a page's own <base> for its relative links", () => {
    const html = `<html><head><base href="https://cdn.test/x/"></head><body><article>${"<p>Words of a paragraph long enough to be the article of this page.</p>".repeat(8)}<a href="y">y</a></article></body></html>`;
    expect(pageMarkdown(html, URL).markdown).toContain("(https://cdn.test/x/y)");
  });

  it("measures elements, depth, text pieces and the title in one pass", () => {
    const shape = pageShape(
      "<html><head><title> A &amp; B </title></head><body><div><p>x<br>y &lt; z</p></div><img src=a></body></html>",
    );
    expect(shape).toMatchObject({ elements: 8, depth: 4, title: "A & B" });
    expect(shape.text).toBe("x\ny < z");
  });

  it.each([
    ["200,000 nested <div>s", `<div>${"<div>".repeat(200_000)}deep${"</div>".repeat(200_000)}`],
    ["300,000 unclosed <div>s", `${"<div>".repeat(300_000)}deep`],
    ["a million < in text", `<p>deep ${"<".repeat(1_000_000)}</p>`],
    ["300,000 '<' between words", `<p>deep ${"a < b ".repeat(300_000)}</p>`],
    ["elements past the limit", `<h1>deep</h1>${"<span>s</span>".repeat(READER_LIMITS.elements)}`],
  ])("answers the tokenizer's text, not the DOM's, for %s", (_, body) => {
    const page = pageMarkdown(
      `<html><head><title>Big</title></head><body>${body}</body></html>`,
      URL,
    );
    expect(page.title).toBe("Big");
    expect(page.markdown).toContain("deep");
  });
});

/**
 * Final answers are Markdown written by an LLM, so they are untrusted. Two
 * layers: `marked` renders raw HTML in the text as text (an answer shows
 * `<script>`, it does not run one), and DOMPurify then removes anything unsafe
 * that Markdown itself can produce (`javascript:` links, for one). The page's
 * Content-Security-Policy (no inline script) is the third.
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  // Links in an answer open beside the console, and the page they open cannot reach back.
  if (node.tagName === "A" && node.getAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/** Markdown as sanitized HTML, ready for `dangerouslySetInnerHTML`. */
export function markdownToHtml(text: string): string {
  const html = marked.parse(text) as string;
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    ADD_ATTR: ["target"],
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
  });
}

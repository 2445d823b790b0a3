/**
 * The console's assets as the server sends them: each with a name that carries
 * a hash of its content, so that browsers cache it for good and still get a
 * new console on the next deploy, and compressed once (Brotli, gzip) on first
 * use, since the script is mostly two libraries (Markdown and its sanitizer).
 * The script arrives Brotli-compressed from the build (see build.ts): those
 * bytes are sent as they are.
 */
import { createHash } from "node:crypto";
import { brotliCompressSync, brotliDecompressSync, constants, gzipSync } from "node:zlib";
import { CONSOLE_CSS, CONSOLE_JS_BROTLI } from "./generated/console-bundle";

export type Encoding = "br" | "gzip" | "identity";

export interface Asset {
  /** The file name under `/ui/assets/`. */
  name: string;
  type: string;
  body: string;
  /** The body in an encoding, compressed on first use and kept. */
  encoded(encoding: Encoding): Uint8Array | string;
}

function asset(stem: string, ext: string, body: string, type: string, brotli?: Uint8Array): Asset {
  const cache = new Map<Encoding, Uint8Array>(brotli ? [["br", brotli]] : []);
  return {
    name: `${stem}.${createHash("sha256").update(body).digest("hex").slice(0, 12)}.${ext}`,
    type,
    body,
    encoded(encoding) {
      if (encoding === "identity") return body;
      let bytes = cache.get(encoding);
      if (!bytes) {
        bytes =
          encoding === "br"
            ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 10 } })
            : gzipSync(body, { level: 9 });
        cache.set(encoding, bytes);
      }
      return bytes;
    },
  };
}

/** The script and the stylesheet of the console. */
const scriptBrotli = Buffer.from(CONSOLE_JS_BROTLI, "base64");

export const consoleAssets: { js: Asset; css: Asset } = {
  js: asset(
    "console",
    "js",
    brotliDecompressSync(scriptBrotli).toString(),
    "text/javascript; charset=utf-8",
    scriptBrotli,
  ),
  css: asset("console", "css", CONSOLE_CSS, "text/css; charset=utf-8"),
};

/**
 * The best encoding an `Accept-Encoding` header allows.
 *
 * @example
 * pickEncoding("gzip, deflate, br") // "br"
 */
export function pickEncoding(header: string | undefined): Encoding {
  const accepted = new Map<string, number>();
  for (const part of (header ?? "").toLowerCase().split(",")) {
    const [name, ...params] = part.trim().split(";");
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)/.exec(p)?.[1]).find(Boolean);
    accepted.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const ok = (name: string) => (accepted.get(name) ?? accepted.get("*") ?? 0) > 0;
  if (ok("br")) return "br";
  if (ok("gzip")) return "gzip";
  return "identity";
}

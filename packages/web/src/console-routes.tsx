/**
 * The web console as a Hono app, mounted by the API at `/ui`: the page for
 * every path under it (the client routes), and the hashed assets. Nothing is
 * fetched from the internet; the page's Content-Security-Policy allows only
 * this origin, so an answer rendered from an LLM cannot load or run anything.
 */
import { type Context, Hono } from "hono";
import type { Asset } from "./assets";
import { ConsoleShell } from "./shell";

/**
 * The assets module holds the whole client bundle as text (about 180 KB): it
 * is imported by the first console request, not when the API function starts,
 * since most API calls never ask for the console.
 */
let loading: Promise<typeof import("./assets") & { byName: Map<string, Asset> }> | undefined;
function assets() {
  loading ??= import("./assets").then((module) => ({
    ...module,
    byName: new Map(Object.values(module.consoleAssets).map((a) => [a.name, a])),
  }));
  return loading;
}

/** The page's policy: scripts, styles, and API calls from this origin only. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // blob: for the images a step wrote, fetched from this origin with the key
  // (`output-files.tsx`); only this page can make its object URLs.
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** What the server tells the console's page about itself. */
export interface ConsoleOptions {
  /**
   * False when the server has no LLM: the page says so (`<meta name="stackvm-llm"
   * content="none">`) and the new-task form opens on a plan, which runs without one.
   */
  llmConfigured?: boolean;
}

/**
 * The console's routes, relative to where they are mounted.
 *
 * @example
 * app.route("/ui", consoleRoutes("/ui", { llmConfigured: false }));
 */
export function consoleRoutes(base = "/ui", options: ConsoleOptions = {}): Hono {
  const app = new Hono();

  app.get("/assets/:name", async (c) => {
    const { byName, pickEncoding } = await assets();
    const asset = byName.get(c.req.param("name"));
    if (!asset) {
      return c.json(
        { error: { code: "not_found", message: `no console asset named ${c.req.param("name")}` } },
        404,
      );
    }
    c.header("content-type", asset.type);
    // The name changes with the content: cache it for good.
    c.header("cache-control", "public, max-age=31536000, immutable");
    c.header("x-content-type-options", "nosniff");
    c.header("vary", "accept-encoding");
    const encoding = pickEncoding(c.req.header("accept-encoding"));
    if (encoding !== "identity") c.header("content-encoding", encoding);
    const body = asset.encoded(encoding);
    return c.body(typeof body === "string" ? body : new Uint8Array(body));
  });

  const page = async (c: Context) => {
    const { js, css } = (await assets()).consoleAssets;
    c.header("content-security-policy", CONSOLE_CSP);
    c.header("x-content-type-options", "nosniff");
    c.header("referrer-policy", "no-referrer");
    // The page names the current asset hashes: always ask for it again.
    c.header("cache-control", "no-cache");
    const shell = (
      <ConsoleShell
        base={base}
        script={js.name}
        style={css.name}
        llm={options.llmConfigured === false ? "none" : "configured"}
      />
    );
    return c.html(`<!doctype html>${shell}`);
  };
  app.get("/", page);
  app.get("/*", page);
  return app;
}

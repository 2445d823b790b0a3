/**
 * `GET /docs`: an interactive API reference (Swagger UI) over `/openapi.json`,
 * served entirely by this app: the page, its script and its stylesheet come from
 * the `swagger-ui-dist` package in node_modules, so it works with no internet
 * access and loads nothing from a CDN. (Scalar's Hono middleware was considered:
 * it loads its script from jsDelivr at run time.) The validator badge, which
 * would call validator.swagger.io, is turned off.
 *
 * On Lambda the package must sit next to the bundle (`nodejs.install` in
 * infra/api.ts): the assets are read from disk on first use and kept in memory.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { ApiApp } from "./env";

/** The files of swagger-ui-dist that the page uses, with their content types. */
const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

/** Starts Swagger UI; a file of its own, because the page allows no inline script. */
const INIT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: true,
    tryItOutEnabled: true,
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>StackVM Serverless API</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

/**
 * Only this origin: the page can load nothing from elsewhere even if a script
 * tried, and no other page may frame it (its "Authorize" form takes an API key).
 */
const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

let folder: string | undefined;
const cache = new Map<string, ArrayBuffer>();

async function asset(name: string): Promise<ArrayBuffer> {
  const hit = cache.get(name);
  if (hit) return hit;
  folder ??= dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  const file = await readFile(join(folder, name));
  const bytes = new Uint8Array(file).buffer;
  cache.set(name, bytes);
  return bytes;
}

/** The spec's routes that are not JSON API, listed in the document so that it names them all. */
export function describeNonApiRoutes(app: ApiApp): void {
  const page = (operationId: string, path: string, summary: string, type: string) =>
    app.openAPIRegistry.registerPath({
      method: "get",
      path,
      operationId,
      summary,
      responses: { 200: { description: summary, content: { [type]: { schema: {} } } } },
    });
  page("getHealth", "/healthz", 'Health check without auth: `{"ok": true}`', "application/json");
  page("getOpenApiDocument", "/openapi.json", "This OpenAPI 3.1 document", "application/json");
  page("getDocsPage", "/docs", "The interactive API reference (no internet needed)", "text/html");
  page("getConsole", "/ui", "The web console", "text/html");
}

/** Registers `/docs` and its assets, served from swagger-ui-dist. */
export function registerDocs(app: ApiApp): void {
  app.get("/docs", (c) => {
    c.header("content-security-policy", CSP);
    return c.html(PAGE);
  });
  app.get("/docs/assets/init.js", (c) => {
    c.header("content-type", "text/javascript; charset=utf-8");
    return c.body(INIT);
  });
  app.get("/docs/assets/:file", async (c) => {
    const file = c.req.param("file");
    const type = ASSETS[file];
    if (!type) return c.notFound();
    c.header("content-type", type);
    c.header("cache-control", "public, max-age=86400");
    return c.body(await asset(file));
  });
}

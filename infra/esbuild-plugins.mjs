/**
 * esbuild plugins for every function's bundle (`nodejs.plugins` in
 * infra/function-defaults.ts; scripts/bundles.ts builds with the same list).
 *
 * - `zodEnglishOnly`: `@hono/zod-openapi` reads zod through its `z` namespace,
 *   which holds `z.locales`: the error messages of 50 languages, 260 KB that
 *   every cold start of the API loaded and nothing reads (zod's own default,
 *   English, is imported by its schemas directly). The barrel resolves to
 *   English alone; `z.locales.en` still answers.
 */

import { dirname, join } from "node:path";

/** @type {import("esbuild").Plugin} */
export const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]zod[\\/]v4[\\/]/.test(args.importer)) return undefined;
      const en = join(dirname(args.importer), "..", "locales", "en.js");
      return { path: "zod-locales-en", namespace: "zod-english-only", pluginData: { en } };
    });
    build.onLoad({ filter: /.*/, namespace: "zod-english-only" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.pluginData.en)};`,
      loader: "js",
      resolveDir: dirname(args.pluginData.en),
    }));
  },
};

export default [zodEnglishOnly];

/**
 * esbuild plugins for every function's bundle (`nodejs.plugins` in
 * infra/function-defaults.ts; scripts/bundles.ts builds with the same list).
 *
 * - `zodEnglishOnly`: `@hono/zod-openapi` reads zod through its `z` namespace,
 *   which holds `z.locales`: the error messages of 50 languages, 260 KB that
 *   every cold start of the API loaded and nothing reads (zod's own default,
 *   English, is imported by its schemas directly). The barrel resolves to
 *   English alone; `z.locales.en` still answers.
 * - `ownCopyForLazyPackages`: the AWS clients a function loads on first use
 *   (S3, Lambda, Bedrock, EventBridge Scheduler, KMS), and the credential
 *   providers the SDK itself imports on first use (SSO, STS, a profile file's),
 *   share `@smithy/core` and `@aws-sdk/core` with the DynamoDB and SQS clients
 *   every start loads. esbuild places a module by the files that reach it, and
 *   those packages' indexes reach every protocol and stream helper, so what
 *   only the lazy code uses (the XML, query and REST protocols; checksum
 *   streams, which read the global `ReadableStream` and with it Node's web
 *   streams; the HTTP/2 handler, which only Bedrock's client uses, and with it
 *   `node:http2`) went into the start: 56 KB of the worker's and about 15 ms of
 *   its CPU. Lazy code gets a copy of the packages it imports, bundled into its
 *   own chunks only, as npm installs a second copy of a package; each client
 *   keeps to its own copy.
 */

import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { dirname, extname, join } from "node:path";

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

/** The AWS clients the functions load on first use (packages/aws/src/lazy-*.ts). */
export const LAZY_CLIENTS = [
  "@aws-sdk/client-s3",
  "@aws-sdk/s3-request-presigner",
  "@aws-sdk/client-lambda",
  "@aws-sdk/client-bedrock-runtime",
  "@aws-sdk/client-scheduler",
  "@aws-sdk/client-kms",
];

const lazyClientFile = new RegExp(
  `[\\\\/]node_modules[\\\\/](${LAZY_CLIENTS.map((name) => name.replace("/", "[\\\\/]")).join("|")})[\\\\/]`,
);
const isBuiltin = (path) => path.startsWith("node:") || builtinModules.includes(path.split("/")[0]);
const inPackage = /[\\/]node_modules[\\/]/;
const bare = (path) => !path.startsWith(".") && !path.startsWith("/");

/** @type {import("esbuild").Plugin} */
export const ownCopyForLazyPackages = {
  name: "own-copy-for-lazy-packages",
  setup(build) {
    const copy = async (args) => {
      if (isBuiltin(args.path)) return undefined;
      const found = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: { copying: true },
      });
      if (found.errors.length > 0) return { errors: found.errors };
      if (found.external) return { path: found.path, external: true };
      return { path: found.path, namespace: "lazy-package-copy" };
    };
    // A lazy client's import of a package, or a package's import on first use, starts the copy…
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.pluginData?.copying) return undefined;
      const lazyClient = bare(args.path) && lazyClientFile.test(args.importer);
      const loadedOnFirstUse = args.kind === "dynamic-import" && inPackage.test(args.importer);
      return lazyClient || loadedOnFirstUse ? copy(args) : undefined;
    });
    // …and everything a copied file imports is copied with it.
    build.onResolve({ filter: /.*/, namespace: "lazy-package-copy" }, (args) => copy(args));
    build.onLoad({ filter: /.*/, namespace: "lazy-package-copy" }, async (args) => ({
      contents: await readFile(args.path, "utf8"),
      loader: extname(args.path) === ".json" ? "json" : "js",
      resolveDir: dirname(args.path),
    }));
  },
};

export default [zodEnglishOnly, ownCopyForLazyPackages];

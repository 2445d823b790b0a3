/**
 * Where every function's esbuild plugins are (`nodejs.plugins`, relative to
 * sst.config.ts): infra/function-defaults.ts sets it, the resource-graph test
 * checks it, and scripts/bundles.ts builds with the same plugins.
 */
export const ESBUILD_PLUGINS = "infra/esbuild-plugins.mjs";

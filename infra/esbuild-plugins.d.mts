import type { Plugin } from "esbuild";

/** Resolves zod's locales barrel to English alone (infra/esbuild-plugins.mjs says why). */
export declare const zodEnglishOnly: Plugin;
declare const plugins: Plugin[];
export default plugins;

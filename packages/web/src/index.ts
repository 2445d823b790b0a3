/** @stackvm/web: the web console, served by the API at `/ui`. */
export type { Asset } from "./assets";
export { consoleAssets } from "./assets";
export { CONSOLE_CSP, consoleRoutes } from "./console-routes";

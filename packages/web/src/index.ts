/**
 * @stackvm/web: the web console, served by the API at `/ui`. The assets
 * (`./assets`) are not exported here: the routes import them on first use, and
 * a static re-export would load them with every API cold start.
 */
export { CONSOLE_CSP, consoleRoutes } from "./console-routes";

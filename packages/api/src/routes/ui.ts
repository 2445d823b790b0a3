/**
 * `/ui`: the web console, served by the same app as the API (locally by
 * `npm start`, on AWS by the API function). It calls only the public API, with
 * the API key the user signs in with, so it needs no route of its own beyond
 * its page and assets, and no key checks here.
 */
import { consoleRoutes } from "@stackvm/web";
import type { ApiDeps } from "../deps";
import type { ApiApp } from "../env";

export function registerUiRoutes(app: ApiApp, deps: ApiDeps): void {
  // The page says whether this server has an LLM, so the new-task form opens where a task can run.
  app.route("/ui", consoleRoutes("/ui", { llmConfigured: deps.tasks.llmConfigured }));
}

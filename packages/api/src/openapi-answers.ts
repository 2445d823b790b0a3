/**
 * The answers every route with a JSON body may give before it runs, added to
 * the document in one place (as `checkJsonBody` and `onError` give them for
 * every route alike): 400 for text that is not JSON, with where it breaks, and
 * 415 for a body not sent as `application/json`.
 */
import type { ApiApp } from "./env";
import { ErrorBody } from "./schemas";

const answer = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

const MALFORMED =
  "Malformed request: the body is not JSON (`malformed_json`, with `details.line`, `column` and `offset`) or does not match the schema (`malformed_request`)";
const UNSUPPORTED =
  "The body was not sent as JSON (`unsupported_media_type`): send `Content-Type: application/json`";

/** Adds the 400 and 415 of a JSON body to every route in the registry that takes one. */
export function describeJsonBodyAnswers(app: ApiApp): void {
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== "route") continue;
    const route = definition.route;
    if (!route.request?.body?.content?.["application/json"]) continue;
    route.responses = { ...route.responses, 400: answer(MALFORMED), 415: answer(UNSUPPORTED) };
  }
}

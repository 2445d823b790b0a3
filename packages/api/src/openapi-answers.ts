/**
 * The answers every route with a JSON body may give before it runs, added to
 * the document in one place (as `checkJsonBody` and `onError` give them for
 * every route alike): 400 for text that is not JSON, with where it breaks, and
 * 415 for a body not sent as `application/json`.
 */
import type { ApiApp } from "./env";
import { OPENAI_PATHS } from "./openai/errors";
import { OpenAiError } from "./openai/schemas";
import { ErrorBody } from "./schemas";

/**
 * An error answer of a route, in the shape that route gives: OpenAI's on the
 * OpenAI-compatible routes (`openAiErrorShape` rewrites every error there), the
 * service's `Error` everywhere else.
 */
export const errorAnswer = (path: string, description: string) => ({
  description,
  content: {
    "application/json": { schema: OPENAI_PATHS.test(path) ? OpenAiError : ErrorBody },
  },
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
    route.responses = {
      ...route.responses,
      400: errorAnswer(route.path, MALFORMED),
      415: errorAnswer(route.path, UNSUPPORTED),
    };
  }
}

/**
 * The routes `openai.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const OPENAI_ROUTES = declareRoutes("openai", {
  createChatCompletion: "POST /v1/chat/completions",
  listModels: "GET /v1/models",
});

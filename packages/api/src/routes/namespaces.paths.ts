/**
 * The routes `namespaces.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const NAMESPACES_ROUTES = declareRoutes("namespaces", {
  listTools: "GET /v1/tools",
  listNamespaces: "GET /v1/namespaces",
  putNamespace: "PUT /v1/namespaces/{name}",
  getNamespace: "GET /v1/namespaces/{name}",
  deleteNamespace: "DELETE /v1/namespaces/{name}",
  addCodeTool: "POST /v1/namespaces/{name}/tools",
  deleteCodeTool: "DELETE /v1/namespaces/{name}/tools/{tool}",
});

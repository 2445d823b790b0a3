/**
 * The routes `files.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const FILES_ROUTES = declareRoutes("files", {
  uploadFile: "POST /v1/files",
  listFiles: "GET /v1/files",
  getFile: "GET /v1/files/{file_id}",
  getFileContent: "GET /v1/files/{file_id}/content",
  deleteFile: "DELETE /v1/files/{file_id}",
});

/**
 * The routes `knowledge.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const KNOWLEDGE_ROUTES = declareRoutes("knowledge", {
  createKnowledgeBase: "POST /v1/knowledge-bases",
  listKnowledgeBases: "GET /v1/knowledge-bases",
  getKnowledgeBase: "GET /v1/knowledge-bases/{kb}",
  deleteKnowledgeBase: "DELETE /v1/knowledge-bases/{kb}",
  uploadDocument: "POST /v1/knowledge-bases/{kb}/documents",
  listDocuments: "GET /v1/knowledge-bases/{kb}/documents",
  getDocument: "GET /v1/knowledge-bases/{kb}/documents/{document_id}",
  deleteDocument: "DELETE /v1/knowledge-bases/{kb}/documents/{document_id}",
});

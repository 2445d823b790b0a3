/**
 * `/v1/knowledge-bases`: knowledge bases, and the documents uploaded to them
 * (multipart, one `file` part), listed with their ingest status, progress and
 * error, replaced and deleted. Ingest runs on the worker; the answer to an upload
 * is the document, `pending`.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { KnowledgeBaseInput, MalformedError, NotFoundError } from "@stackvm/core";
import type { ApiApp, ApiEnv } from "../env";
import {
  bearer,
  commonErrors,
  conflictError,
  ErrorBody,
  invalidError,
  json,
  jsonBody,
} from "../schemas";
import { readUploadBody } from "../upload-body";
import type { KNOWLEDGE_ROUTES } from "./knowledge.paths";

const KbParam = z.object({
  kb: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "kb", in: "path" } }),
});
const DocParams = KbParam.extend({
  document_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "document_id", in: "path" } }),
});

const KnowledgeBase = z
  .object({
    name: z.string(),
    description: z.string(),
    documents: z.number().int(),
    chunks: z.number().int(),
    created_at: z.string(),
  })
  .openapi("KnowledgeBase");

const Document = z
  .object({
    document_id: z.string(),
    filename: z.string(),
    content_type: z.string(),
    size: z.number().int(),
    status: z.enum(["pending", "ingesting", "ready", "failed"]),
    chunks: z.number().int(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    progress: z.object({ stage: z.string(), done: z.number(), total: z.number() }).nullable(),
    usage: z.object({
      llm_calls: z.number().int(),
      embedding_tokens: z.number().int(),
      input_tokens: z.number().int(),
      output_tokens: z.number().int(),
      cost_usd: z.number(),
    }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Document");

function knowledge(c: { get(key: "deps"): ApiEnv["Variables"]["deps"] }) {
  const service = c.get("deps").knowledge;
  if (!service)
    throw new NotFoundError("route", "knowledge bases (no knowledge index is configured)");
  return service;
}

export function registerKnowledgeRoutes(app: ApiApp, routes: typeof KNOWLEDGE_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.createKnowledgeBase,
      summary: "Create a knowledge base",
      security: bearer,
      request: jsonBody(KnowledgeBaseInput),
      responses: {
        201: json(KnowledgeBase, "Created"),
        ...commonErrors,
        ...conflictError,
        ...invalidError,
      },
    }),
    async (c) => c.json(await knowledge(c).create(c.get("tenantId"), c.req.valid("json")), 201),
  );

  app.openapi(
    createRoute({
      ...routes.listKnowledgeBases,
      summary: "List knowledge bases",
      security: bearer,
      responses: {
        200: json(z.object({ knowledge_bases: z.array(KnowledgeBase) }), "Knowledge bases"),
        ...commonErrors,
      },
    }),
    async (c) => c.json({ knowledge_bases: await knowledge(c).list(c.get("tenantId")) }, 200),
  );

  app.openapi(
    createRoute({
      ...routes.getKnowledgeBase,
      summary: "Read a knowledge base",
      security: bearer,
      request: { params: KbParam },
      responses: { 200: json(KnowledgeBase, "The knowledge base"), ...commonErrors },
    }),
    async (c) => c.json(await knowledge(c).get(c.get("tenantId"), c.req.valid("param").kb), 200),
  );

  app.openapi(
    createRoute({
      ...routes.deleteKnowledgeBase,
      summary: "Delete a knowledge base, its documents and their chunks",
      security: bearer,
      request: { params: KbParam },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      await knowledge(c).delete(c.get("tenantId"), c.req.valid("param").kb);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      ...routes.uploadDocument,
      summary: "Upload a document (multipart), or ask for a presigned upload URL (JSON)",
      description:
        "Send `multipart/form-data` with a `file` part (plain text, Markdown, HTML, PDF, JSON or CSV, " +
        "by its content type or file extension) and optionally `document_id` to replace that document. " +
        "The answer is the document, `pending`; ingest (extract, chunk, embed, index) runs queued, " +
        "and GET shows its status, progress and error. For a large document send JSON " +
        '`{"filename", "content_type", "document_id"?}` instead: the answer (201) is the document and an ' +
        "`upload_url` to PUT the file to (with that Content-Type) within `expires_in` seconds; the first " +
        "read of the document after the PUT queues its ingest.",
      security: bearer,
      request: { params: KbParam },
      responses: {
        201: json(
          z.object({ document: Document, upload_url: z.string(), expires_in: z.number().int() }),
          "A presigned upload URL",
        ),
        202: json(Document, "Accepted for ingest"),
        413: json(ErrorBody, "The upload is over STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES (`too_large`)"),
        ...commonErrors,
        ...invalidError,
      },
    }),
    async (c) => {
      const upload = await readUploadBody(c.req, "document", "notes.md");
      if ("presign" in upload) {
        const answer = await knowledge(c).presign(
          c.get("tenantId"),
          c.req.valid("param").kb,
          upload.presign,
        );
        return c.json(answer, 201);
      }
      const { file, form } = upload;
      const documentId = form.document_id;
      if (documentId !== undefined && typeof documentId !== "string") {
        throw new MalformedError("document_id must be one text field");
      }
      const document = await knowledge(c).upload(c.get("tenantId"), c.req.valid("param").kb, {
        filename: file.name,
        contentType: file.type || undefined,
        bytes: new Uint8Array(await file.arrayBuffer()),
        ...(documentId ? { documentId } : {}),
      });
      return c.json(document, 202);
    },
  );

  app.openapi(
    createRoute({
      ...routes.listDocuments,
      summary: "List a knowledge base's documents with their ingest status",
      security: bearer,
      request: {
        params: KbParam,
        query: z.object({
          limit: z.coerce.number().int().min(1).max(100).default(100),
          cursor: z.string().max(2000).optional(),
        }),
      },
      responses: {
        200: json(
          z.object({ documents: z.array(Document), next_cursor: z.string().nullable() }),
          "A page of documents",
        ),
        ...commonErrors,
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      return c.json(
        await knowledge(c).listDocuments(
          c.get("tenantId"),
          c.req.valid("param").kb,
          q.cursor ?? null,
          q.limit,
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.getDocument,
      summary: "Read a document: status, progress, chunks, error",
      security: bearer,
      request: { params: DocParams },
      responses: { 200: json(Document, "The document"), ...commonErrors },
    }),
    async (c) => {
      const { kb, document_id } = c.req.valid("param");
      return c.json(await knowledge(c).getDocument(c.get("tenantId"), kb, document_id), 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.deleteDocument,
      summary: "Delete a document and its chunks",
      security: bearer,
      request: { params: DocParams },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      const { kb, document_id } = c.req.valid("param");
      await knowledge(c).deleteDocument(c.get("tenantId"), kb, document_id);
      return c.body(null, 204);
    },
  );
}

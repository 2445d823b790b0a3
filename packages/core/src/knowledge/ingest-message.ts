/**
 * The ingest message on the step queue and the names it carries. Apart from
 * the rest of knowledge's records (`model.ts`, which re-exports them): the
 * worker reads every queue message with it, and builds no other knowledge
 * schema at its cold start.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";

export const KnowledgeBaseName = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, "a knowledge base name is 1 to 64 of a-z, 0-9, _ and -");

/** A document id: given by the uploader (to replace a document) or made at upload. */
export const DocumentId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "a document_id is 1 to 64 of A-Z, a-z, 0-9, _ and -");

/**
 * Work on a knowledge base's index, in the knowledge base's message group so that
 * one writer at a time touches it (only the worker loads the index): `ingest`
 * version `version` of a document (one document per message; a message for an
 * older version is stale), `delete` a document's rows, `drop` the whole table.
 */
export const IngestMessage = buildOnce(() =>
  z.discriminatedUnion("op", [
    z
      .object({
        v: z.literal(1),
        kind: z.literal("ingest"),
        op: z.literal("ingest"),
        tenant_id: z.string().min(1).max(128),
        knowledge_base: KnowledgeBaseName,
        document_id: DocumentId,
        /** Each upload of the document bumps it. */
        version: z.number().int().min(1),
      })
      .strict(),
    z
      .object({
        v: z.literal(1),
        kind: z.literal("ingest"),
        op: z.literal("delete"),
        tenant_id: z.string().min(1).max(128),
        knowledge_base: KnowledgeBaseName,
        document_id: DocumentId,
      })
      .strict(),
    z
      .object({
        v: z.literal(1),
        kind: z.literal("ingest"),
        op: z.literal("drop"),
        tenant_id: z.string().min(1).max(128),
        knowledge_base: KnowledgeBaseName,
      })
      .strict(),
  ]),
);
export type IngestMessage = z.infer<ReturnType<typeof IngestMessage>>;

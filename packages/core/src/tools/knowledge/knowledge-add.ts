/**
 * `knowledge_add`: a plan's memory. Adds text to a knowledge base the
 * namespace allows, ingested before the step commits, so that a later task's
 * `vector_search` finds it. The written chunks are the step's value and on its
 * commit. The document id comes from the step's idempotency key, so a
 * redelivered step answers the document it wrote instead of adding it twice.
 */
import * as z from "zod";
import { buildOnce } from "../../build-once";
import { sha256Hex } from "../../ids";
import type { KnowledgeAddPort } from "../../knowledge/knowledge-port";
import { MEMORY_MAX_CHARS } from "../../knowledge/memory-limits";
import type { Tool, ToolContext, ToolResult } from "../tool";
import { KnowledgeBaseField, searchScope } from "./search-input";

export const KnowledgeAddInput = buildOnce(() =>
  z
    .object({
      text: z
        .string()
        .trim()
        .min(1, "text must not be empty")
        .max(
          MEMORY_MAX_CHARS,
          `text is longer than ${MEMORY_MAX_CHARS.toLocaleString("en")} characters: add it in parts, one knowledge_add each`,
        )
        .describe("What to remember, in words (Markdown)."),
      title: z
        .string()
        .trim()
        .max(200, "title is longer than 200 characters")
        .optional()
        .describe("A short name for it, shown as the document's file name."),
      knowledge_base: KnowledgeBaseField().describe(
        "Add to this knowledge base; needed when the namespace allows more than one.",
      ),
    })
    .strict(),
);
export type KnowledgeAddInput = z.infer<ReturnType<typeof KnowledgeAddInput>>;

/** The document id of a step's memory: the same on every delivery of the step. */
export const memoryDocumentId = (idempotencyKey: string): string =>
  `mem_${sha256Hex(new TextEncoder().encode(idempotencyKey)).slice(0, 32)}`;

/** The `knowledge_add` tool over the knowledge port. */
export function knowledgeAddTool(port: KnowledgeAddPort): Tool<KnowledgeAddInput> {
  return {
    name: "knowledge_add",
    description:
      "Remembers text for later tasks: adds it to a knowledge base (ingested before the step ends), where a later vector_search or retrieve_knowledge_graph finds it. Input: text (required, up to 100,000 characters), title (optional), knowledge_base (needed when the namespace allows more than one). Result: {knowledge_base, document_id, chunks: [{chunk_id, position, text}]}.",
    get input() {
      return KnowledgeAddInput();
    },
    async run(input: KnowledgeAddInput, context: ToolContext): Promise<ToolResult> {
      const written = await port.add(searchScope(context, input.knowledge_base), {
        text: input.text,
        documentId: memoryDocumentId(context.idempotencyKey),
        ...(input.title ? { title: input.title } : {}),
      });
      const value = {
        knowledge_base: written.knowledge_base,
        document_id: written.document_id,
        chunks: written.chunks,
      };
      return {
        value,
        details: {
          knowledge_add: {
            knowledge_base: written.knowledge_base,
            document_id: written.document_id,
            filename: written.filename,
            created: written.created,
            chunks: written.chunks.map((c) => c.chunk_id),
            usage: written.usage,
          },
        },
      };
    },
  };
}

/**
 * The knowledge wire protocol, version 1: what the step worker sends to the
 * knowledge function (a Lambda `Invoke` on AWS, a call in process locally) and
 * what comes back. Strict and versioned like the sandbox's, with the limits in
 * the schema. Both ends live here: `answerKnowledge` serves a request with the
 * knowledge services, `knowledgeClient` is the port over any transport, so the
 * local path goes through the same parse and the same JSON as AWS does.
 */
import * as z from "zod";
import { type ErrorKind, StackVMError } from "../errors";
import { DocumentId, IngestMessage } from "./ingest-message";
import type { KnowledgePort } from "./knowledge-port";
import { MEMORY_MAX_CHARS } from "./memory-limits";
import type { SearchScope } from "./search";

export const KNOWLEDGE_PROTOCOL_VERSION = 1;

const Name = z.string().min(1).max(128);

/** The step's tenant and namespace, and the one knowledge base asked for. */
export const KnowledgeScope = z
  .object({
    tenant: Name,
    namespace: z
      .object({ name: Name, knowledge_bases: z.array(Name).max(1_000).optional() })
      .strict(),
    knowledge_base: Name.optional(),
  })
  .strict();
export type KnowledgeScope = z.infer<typeof KnowledgeScope>;

const Query = z.string().min(1).max(8_000);

/** One request: a search of chunks, a graph search, a plan's text to add, or one ingest message. */
export const KnowledgeRequest = z.discriminatedUnion("op", [
  z
    .object({
      v: z.literal(1),
      op: z.literal("chunks"),
      scope: KnowledgeScope,
      query: Query,
      top_k: z.number().int().min(1).max(50),
    })
    .strict(),
  z
    .object({ v: z.literal(1), op: z.literal("graph"), scope: KnowledgeScope, query: Query })
    .strict(),
  z
    .object({
      v: z.literal(1),
      op: z.literal("add"),
      scope: KnowledgeScope,
      document_id: DocumentId,
      text: z.string().min(1).max(MEMORY_MAX_CHARS),
      title: z.string().max(200).optional(),
    })
    .strict(),
  z
    .object({
      v: z.literal(1),
      op: z.literal("ingest"),
      message: IngestMessage(),
      last_attempt: z.boolean(),
    })
    .strict(),
]);
export type KnowledgeRequest = z.infer<typeof KnowledgeRequest>;

const ErrorKindSchema = z.enum([
  "invalid",
  "malformed",
  "unauthorized",
  "forbidden",
  "not_found",
  "conflict",
  "too_large",
  "rate_limited",
  "step",
  "retryable",
  "internal",
]) satisfies z.ZodType<ErrorKind>;

/** The answer: the operation's result, or the error it threw, kind and code kept. */
export const KnowledgeReply = z.discriminatedUnion("ok", [
  z.object({ v: z.literal(1), ok: z.literal(true), result: z.unknown() }).strict(),
  z
    .object({
      v: z.literal(1),
      ok: z.literal(false),
      error: z
        .object({
          kind: ErrorKindSchema,
          code: z.string().min(1).max(128),
          message: z.string().max(4_000),
          retry_after_seconds: z.number().int().min(0).optional(),
        })
        .strict(),
    })
    .strict(),
]);
export type KnowledgeReply = z.infer<typeof KnowledgeReply>;

const toScope = (scope: KnowledgeScope): SearchScope => ({
  tenant: scope.tenant,
  namespace: scope.namespace,
  knowledgeBase: scope.knowledge_base,
});

const fromScope = (scope: SearchScope): KnowledgeScope => ({
  tenant: scope.tenant,
  namespace: {
    name: scope.namespace.name,
    ...(scope.namespace.knowledge_bases
      ? { knowledge_bases: [...scope.namespace.knowledge_bases] }
      : {}),
  },
  ...(scope.knowledgeBase === undefined ? {} : { knowledge_base: scope.knowledgeBase }),
});

/**
 * Serves one request with the knowledge services. A request that is not the
 * protocol, and every error the services throw, is an answer (kind and code
 * kept, so the worker decides retry as if it had thrown itself); an error that
 * is not ours is logged and answered as `internal`, which the worker retries.
 *
 * @example
 * export const handler = (event: unknown) => answerKnowledge(knowledge, event, log);
 */
export async function answerKnowledge(
  port: KnowledgePort,
  event: unknown,
  /** Where an error that is not ours is reported (the entry file's logger). */
  log: { error(message: string, fields?: Record<string, unknown>): void },
): Promise<KnowledgeReply> {
  const parsed = KnowledgeRequest.safeParse(event);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join(".") || "request"}: ${issue.message}`);
    return failure(
      "malformed",
      "knowledge_request_invalid",
      `not a knowledge request of protocol version ${KNOWLEDGE_PROTOCOL_VERSION}: ${issues.join("; ")}`,
    );
  }
  const request = parsed.data;
  try {
    switch (request.op) {
      case "chunks":
        return success(await port.chunks(toScope(request.scope), request.query, request.top_k));
      case "graph":
        return success(await port.graph(toScope(request.scope), request.query));
      case "add":
        return success(
          await port.add(toScope(request.scope), {
            text: request.text,
            documentId: request.document_id,
            ...(request.title === undefined ? {} : { title: request.title }),
          }),
        );
      case "ingest":
        return success(await port.handle(request.message, request.last_attempt));
    }
  } catch (error) {
    if (error instanceof StackVMError) {
      return failure(error.kind, error.code, error.message, error.retryAfterSeconds);
    }
    log.error("knowledge request failed", { op: request.op, error: String(error) });
    return failure(
      "internal",
      "knowledge_failed",
      `knowledge ${request.op} failed: ${String(error)}`,
    );
  }
}

/**
 * The knowledge port over a transport that carries one request to
 * `answerKnowledge` and brings back its answer (a Lambda invoke, a call in
 * process). An error answer is thrown again as a `StackVMError` of the same
 * kind and code; an answer that is not the protocol is an internal error.
 *
 * @example
 * const knowledge = knowledgeClient((request) => invokeKnowledgeFunction(request));
 */
export function knowledgeClient(
  send: (request: KnowledgeRequest) => Promise<unknown>,
): KnowledgePort {
  const call = async <T>(request: KnowledgeRequest): Promise<T> => {
    const reply = KnowledgeReply.safeParse(await send(request));
    if (!reply.success) {
      throw new StackVMError(
        "internal",
        "knowledge_reply_invalid",
        `the knowledge function answered ${request.op} with something that is not the knowledge protocol`,
      );
    }
    if (reply.data.ok) return reply.data.result as T;
    const { kind, code, message, retry_after_seconds } = reply.data.error;
    throw new StackVMError(kind, code, message, {
      ...(retry_after_seconds === undefined ? {} : { retryAfterSeconds: retry_after_seconds }),
    });
  };
  return {
    chunks: (scope, query, topK) =>
      call({ v: 1, op: "chunks", scope: fromScope(scope), query, top_k: topK }),
    graph: (scope, query) => call({ v: 1, op: "graph", scope: fromScope(scope), query }),
    add: (scope, input) =>
      call({
        v: 1,
        op: "add",
        scope: fromScope(scope),
        document_id: input.documentId,
        text: input.text,
        ...(input.title === undefined ? {} : { title: input.title }),
      }),
    handle: (message, lastAttempt = false) =>
      call({ v: 1, op: "ingest", message, last_attempt: lastAttempt }),
  };
}

const success = (result: unknown): KnowledgeReply => ({ v: 1, ok: true, result });

const failure = (
  kind: ErrorKind,
  code: string,
  message: string,
  retryAfterSeconds?: number,
): KnowledgeReply => ({
  v: 1,
  ok: false,
  error: {
    kind,
    code,
    message: message.slice(0, 4_000),
    ...(retryAfterSeconds === undefined ? {} : { retry_after_seconds: retryAfterSeconds }),
  },
});

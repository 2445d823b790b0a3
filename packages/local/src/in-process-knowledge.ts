import type { KnowledgePort, Log } from "@stackvm/core";
import { answerKnowledge, knowledgeClient } from "@stackvm/core/knowledge-protocol";

/**
 * The knowledge port of the local stack: the same protocol as the worker's
 * Lambda invoke of the knowledge function, each request and answer passed
 * through JSON, served in process by `serve` (resolved on first call, since the
 * services are built after the port). A search that would not survive the trip
 * to the function on AWS fails here too.
 */
export function inProcessKnowledge(serve: () => KnowledgePort, log: Log): KnowledgePort {
  const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
  return knowledgeClient(async (request) =>
    json(await answerKnowledge(serve(), json(request), log)),
  );
}

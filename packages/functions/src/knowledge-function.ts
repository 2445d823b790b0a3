/**
 * Lambda entry of the knowledge function: the searches behind `vector_search`
 * and `retrieve_knowledge_graph`, and one ingest message at a time, for the
 * worker that invokes it (the knowledge protocol in @stackvm/core). LanceDB
 * (its native module installed beside this bundle, infra/knowledge.ts) and the
 * PDF reader load here on first use, never in the step worker.
 */
import { lazyLanceIndex } from "@stackvm/aws/lambda-knowledge";
import { answerKnowledge, type KnowledgeReply } from "@stackvm/core/knowledge-protocol";
import { awsSystem } from "./aws-system";
import { embeddingsPort } from "./embeddings-port";
import { knowledgePortOf } from "./knowledge";
import { llmPort } from "./llm-port";

// Ingest calls the LLM (the knowledge graph of each chunk) and the embeddings;
// LanceDB on S3 under the bucket's knowledge-index/ prefix.
const runtime = awsSystem(process.env, {
  llm: (config) => llmPort(config),
  knowledge: (config) => ({
    knowledgeIndex: lazyLanceIndex({ root: config.knowledge.indexUri }),
    embeddings: embeddingsPort(config),
  }),
});
const knowledge = knowledgePortOf(runtime.system.knowledge);

/** Answers one knowledge request; every error of ours is an answer, not a FunctionError. */
export const handler = (event: unknown): Promise<KnowledgeReply> =>
  answerKnowledge(knowledge, event, runtime.log);

/**
 * The knowledge function: the searches behind `vector_search` and
 * `retrieve_knowledge_graph`, and the ingest of documents (extract, chunk,
 * graph, embed, index), apart from the step worker, which invokes it
 * synchronously as it invokes the sandbox. LanceDB's native module (about
 * 200 MB) and the PDF reader live here, so the worker, which runs every step,
 * carries neither.
 *
 * - Its S3 rights are its prefixes only: it reads the uploaded documents
 *   (`k/`) and reads and writes the LanceDB index (`knowledge-index/`); the
 *   rest of the bucket (values, artifacts, traces) it cannot touch.
 * - The table: ingest moves each document's status and spends from the
 *   tenant's month, and a search reads which knowledge bases a namespace may see.
 * - The LLM and embeddings settings (ingest asks the LLM for each chunk's
 *   graph, search embeds the query); with LlmProvider=bedrock, InvokeModel on
 *   the configured models only. No queue, no sandbox, no KMS, no schedules.
 * - x86_64 (`knowledgeArchitecture`): the registry serves no arm64 LanceDB of
 *   the pinned version. Its packages are installed by the postbuild hook, the
 *   same install the package check measures (infra/function-installs.ts), not
 *   by `nodejs.install`, which would also install LanceDB's optional 300 MB
 *   embeddings runtime and take the package over Lambda's 250 MB.
 */
import { bedrockPermissions } from "./bedrock";
import { cachedInstall, placeInstall } from "./function-installs";
import { knowledgeArchitecture, knowledgeInstallSpec } from "./knowledge-installs";
import { llmTimeoutMsWithin, queue, workerTimeoutSeconds } from "./queue";
import { llmEnvironment, llmSecrets, withoutEmpty } from "./secrets";
import { bucket, table } from "./storage";

/** Where LanceDB keeps the index in the bucket (`STACKVM_KNOWLEDGE_INDEX`'s default). */
export const knowledgeIndexPrefix = "knowledge-index/";

/** Where the uploaded documents are (`documentBlobPrefix` in @stackvm/core). */
export const knowledgeDocumentsPrefix = "k/";

/**
 * One search or one document's ingest. Below the worker's timeout, so that the
 * worker, which waits on it, sees the knowledge function's timeout as an error
 * it retries rather than being cut off itself.
 */
export const knowledgeTimeoutSeconds = workerTimeoutSeconds - 30;

/** The S3 rights of the knowledge function: its two prefixes, nothing else. */
export const knowledgeBucketPermissions = [
  {
    actions: ["s3:GetObject"],
    resources: [$interpolate`${bucket.arn}/${knowledgeDocumentsPrefix}*`],
  },
  {
    actions: ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
    resources: [$interpolate`${bucket.arn}/${knowledgeIndexPrefix}*`],
  },
  {
    actions: ["s3:ListBucket"],
    resources: [bucket.arn],
    conditions: [
      { test: "StringLike", variable: "s3:prefix", values: [`${knowledgeIndexPrefix}*`] },
    ],
  },
];

export const knowledge = new sst.aws.Function("Knowledge", {
  handler: "packages/functions/src/knowledge-function.handler",
  architecture: knowledgeArchitecture,
  timeout: `${knowledgeTimeoutSeconds} seconds`,
  // LanceDB's vector search and pdf.js's parsing; memory also buys CPU on Lambda.
  memory: "2048 MB",
  // LanceDB, Arrow and unpdf for the function's architecture, beside the bundle.
  hook: {
    postbuild: async (dir) => {
      // The resource-graph tests evaluate the app many times, and SST zips every
      // build: 200 MB each time would cost minutes. They set this; the package
      // test builds and checks this same install (test/infra/function-packages.test.ts).
      if (process.env.STACKVM_SKIP_FUNCTION_INSTALLS === "1") return;
      const root = $cli.paths.root;
      await placeInstall(
        await cachedInstall(root, knowledgeArchitecture, knowledgeInstallSpec()),
        dir,
      );
    },
  },
  link: [table, ...Object.values(llmSecrets)],
  permissions: $resolve([knowledgeBucketPermissions, bedrockPermissions]).apply((groups) =>
    groups.flat(),
  ),
  environment: withoutEmpty({
    STACKVM_TABLE: table.name,
    // Read by the shared configuration; the function sends nothing (no queue rights).
    STACKVM_QUEUE_URL: queue.url,
    STACKVM_BUCKET: bucket.name,
    ...llmEnvironment,
    // A graph extraction that would outlast the invocation fails as llm_timeout.
    LLM_TIMEOUT_MS: llmTimeoutMsWithin(knowledgeTimeoutSeconds),
  }),
});

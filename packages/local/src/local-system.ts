/**
 * The system on one machine: the ports over the emulators (the same AWS SDK
 * adapters as on AWS), the in-process stand-ins for what AWS runs apart (the
 * knowledge function, EventBridge Scheduler), and the doctor, which only a
 * process holding the LLM, the embeddings and the sandbox can run, wired with
 * the rest by `createSystem`. `stack.ts` starts the emulators, the servers and
 * the pollers around it.
 */
import {
  type AwsClients,
  DynamoItemStore,
  LanceKnowledgeIndex,
  lanceEmulatorStorage,
  S3Blobs,
  S3Uploads,
  SdkMcpClient,
  type SqsQueue,
} from "@stackvm/aws";
import { AesSecretBox, type Clock, type Log, type SandboxPort } from "@stackvm/core";
import {
  createSystem,
  embeddingsConfigured,
  embeddingsPort,
  knowledgePortOf,
  llmPort,
  type RuntimeConfig,
  type System,
  systemOptions,
} from "@stackvm/functions";
import { createDoctor } from "./doctor";
import type { Emulators } from "./emulators";
import { inProcessKnowledge } from "./in-process-knowledge";
import { endpointText, llmSummary } from "./llm-summary";
import type { LocalScheduler } from "./local-scheduler";
import { localSecretKey } from "./secret-key";
import type { LocalTestHooks } from "./testing/test-hooks";

/** What the stack has started when it assembles the system. */
export interface LocalSystemParts {
  config: RuntimeConfig;
  clients: AwsClients;
  emulators: Emulators;
  queue: SqsQueue;
  scheduler: LocalScheduler;
  clock: Clock;
  /** The stack's own sandbox child, or the one a test gave. */
  sandbox: SandboxPort;
  log: Log;
  /** Where data lives across restarts (the secret key's file); null in memory. */
  dataDir: string | null;
  /** The ports the outbound guard refuses: the stack's own listeners (the API's added once it listens). */
  ownPorts: Set<number>;
  /** The public URL once known (the API's own, unless configured). */
  publicUrl: () => string | null;
  env: Record<string, string | undefined>;
}

/** Builds the whole system over the emulators (see the module's comment). */
export function createLocalSystem(parts: LocalSystemParts, hooks: LocalTestHooks = {}): System {
  const { config, clients, emulators, log, env } = parts;
  const base = systemOptions(config, log, true);
  const outbound = {
    ...base.outbound,
    ownPorts: parts.ownPorts,
    ...(hooks.resolve ? { resolve: hooks.resolve } : {}),
  };
  const llm = hooks.llm ?? llmPort(config);
  const embeddings = embeddingsPort(config);
  const system: System = createSystem(
    {
      items: new DynamoItemStore(clients.doc, config.table),
      blobs: new S3Blobs(clients.s3, config.bucket),
      queue: parts.queue,
      clock: parts.clock,
      sandbox: parts.sandbox,
      llm,
      scheduler: parts.scheduler,
      wakes: parts.scheduler,
      // LanceDB on the S3 emulator: the same engine and code path as on AWS, its files under the data folder.
      knowledgeIndex: new LanceKnowledgeIndex({
        root: env.STACKVM_KNOWLEDGE_INDEX ?? `s3://${config.bucket}/knowledge-index`,
        storageOptions: lanceEmulatorStorage(
          emulators.endpoints.s3,
          emulators.region,
          emulators.credentials,
        ),
      }),
      embeddings,
      // The worker reaches them as on AWS, through the knowledge protocol (each
      // request and answer through JSON), served in this process as the local
      // stand-in for the knowledge function.
      knowledge: inProcessKnowledge(() => knowledgePortOf(system.knowledge), log),
      uploads: new S3Uploads(clients.s3, config.bucket),
      mcp: new SdkMcpClient(),
      secrets: new AesSecretBox(localSecretKey(parts.dataDir)),
      // This one process holds the LLM, embeddings and sandbox: `GET /v1/doctor` checks them.
      doctor: createDoctor(
        {
          llm,
          embeddings,
          sandbox: parts.sandbox,
          llmConfig: config.llm,
          embeddingModel: config.knowledge.embeddingModel,
          baseURL: config.openai.baseURL,
          providers: config.providers,
          reason: config.reasonLlm && {
            provider: config.reasonLlm.provider,
            server: endpointText(
              config.reasonLlm.provider,
              config.reasonLlm.openai,
              config.providers.bedrock,
            ),
          },
        },
        hooks.doctorCacheMs === undefined ? {} : { cacheMs: hooks.doctorCacheMs },
      ),
    },
    {
      ...base,
      outbound,
      // No embedding endpoint: a document upload is refused at once, not failed later.
      knowledge: { ...config.knowledge, embeddingsConfigured: embeddingsConfigured(config) },
      // A port given by a test is an LLM; else the configuration says.
      llmConfigured: hooks.llm !== undefined || llmSummary(config) !== null,
      resolvePublicUrl: parts.publicUrl,
      ...(hooks.afterTerminal
        ? { afterTerminal: [...(base.afterTerminal ?? []), ...hooks.afterTerminal] }
        : {}),
    },
  );
  return system;
}

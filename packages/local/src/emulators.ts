/**
 * The embedded emulators of local mode, in this process: dynalite for DynamoDB
 * (LevelDB on disk, or memory) and fauxqs for SQS and S3 (SQLite on disk, or
 * memory), each on a free port.
 *
 * Where they differ from AWS (measured; the conformance suites in
 * test/conformance run against them, and the item store's also against AWS's
 * DynamoDB Local):
 * - dynalite has no UpdateTimeToLive and no transactions; it never finds a map
 *   or a list equal in a condition (the item store allows scalars only), and it
 *   takes an empty string as an index key (the item store refuses it first).
 * - fauxqs honours FIFO groups (a group waits while one of its messages is in
 *   flight), deduplication ids and the RedrivePolicy to a FIFO DLQ, but hands
 *   out one message per group per receive (SQS may hand several, in order).
 * - fauxqs 2.4.1 with persistence fails ChangeMessageVisibility to 0 (SqsQueue
 *   uses 1 s instead), and a long poll aborted by the client still takes the
 *   next message, which then waits out its visibility timeout.
 * - fauxqs 2.4.1 takes request bodies up to 11 MiB; patches/fauxqs+2.4.1.patch
 *   raises it to 101 MiB, so that a presigned PUT of a document up to the
 *   documented 100 MiB is taken locally as S3 takes it.
 * - fauxqs 2.4.1 listens on 0.0.0.0 whatever `host` says, with no option for
 *   it: `pinListenHost` makes the server it creates listen on `host` instead, as
 *   it holds every tenant's queues and blobs.
 * - Neither checks a signature. Both are put behind `requireSignature`, which
 *   answers 403 to any request not signed with this data folder's own random
 *   credentials (`emulator-credentials.ts`): reaching a port is not enough.
 */
import { mkdir } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import dynalite from "dynalite";
import { startFauxqs } from "fauxqs";
import { emulatorCredentials } from "./emulator-credentials";
import { gateRequests } from "./request-gate";
import { requireSignature } from "./signed-only";
import type { EmulatorCredentials } from "./sigv4-check";

/** How long a stop waits for requests already inside dynalite to answer. */
const DRAIN_MS = 5_000;

export interface EmulatorsOptions {
  /** Where state lives across restarts (`dynamodb/`, `fauxqs/` inside); null keeps it in memory. */
  dataDir: string | null;
  /** The address both emulators listen on and the endpoints name (default 127.0.0.1). */
  host?: string;
}

export interface Emulators {
  endpoints: { dynamodb: string; sqs: string; s3: string };
  region: string;
  /** The only credentials the emulators accept (random per data folder); the SDK signs with them. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Their HTTP servers (tests watch what reaches them). */
  servers: { dynamodb: http.Server; fauxqs: http.Server };
  /** Stops both emulators and closes their connections and files. */
  stop(): Promise<void>;
}

/**
 * Starts dynalite and fauxqs, both listening on `host` only.
 *
 * @example
 * const emulators = await startEmulators({ dataDir: ".stackvm" });
 * const clients = createAwsClients(emulators);
 * // ...
 * clients.destroy();
 * await emulators.stop();
 */
export async function startEmulators(options: EmulatorsOptions): Promise<Emulators> {
  const host = options.host ?? "127.0.0.1";
  const dataDir = options.dataDir;
  const dynamoDir = dataDir === null ? undefined : join(dataDir, "dynamodb");
  const fauxqsDir = dataDir === null ? undefined : join(dataDir, "fauxqs");
  if (dynamoDir) await mkdir(dynamoDir, { recursive: true });
  if (fauxqsDir) await mkdir(fauxqsDir, { recursive: true });
  const credentials = emulatorCredentials(dataDir);

  // Tables are usable at once (dynalite keeps them CREATING for 500 ms by default).
  const dynamo = dynalite({
    ...(dynamoDir ? { path: dynamoDir } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  const gate = gateRequests(dynamo);
  requireSignature(dynamo, credentials);
  await new Promise<void>((resolve, reject) => {
    dynamo.once("error", reject);
    dynamo.listen(0, host, () => {
      dynamo.off("error", reject);
      resolve();
    });
  });
  const stopDynamo = async () => {
    // Requests already inside dynalite finish before its database closes.
    await gate.close(DRAIN_MS);
    await new Promise<void>((resolve, reject) => {
      dynamo.close((error) => (error ? reject(error) : resolve()));
      // Keep-alive sockets of SDK clients would hold close() open.
      dynamo.closeAllConnections();
    });
  };

  let fauxqs: Awaited<ReturnType<typeof startFauxqs>>;
  const fauxqsServers: http.Server[] = [];
  try {
    fauxqs = await pinListenHost(host, credentials, fauxqsServers, () =>
      startFauxqs({ port: 0, logger: false, ...(fauxqsDir ? { dataDir: fauxqsDir } : {}) }),
    );
  } catch (error) {
    await stopDynamo();
    throw error;
  }
  // Fail closed: a later fauxqs that makes its server another way must not listen on every interface.
  const listening = new URL(fauxqs.address).hostname.replace(/^\[(.*)\]$/, "$1");
  if (listening !== host && (listening === "0.0.0.0" || listening === "::")) {
    await Promise.all([stopDynamo(), fauxqs.stop()]);
    throw new Error(`fauxqs listens on every interface (${listening}), not on ${host}`);
  }

  const sqsEndpoint = `http://${host}:${fauxqs.port}`;
  return {
    endpoints: {
      dynamodb: `http://${host}:${(dynamo.address() as AddressInfo).port}`,
      sqs: sqsEndpoint,
      s3: sqsEndpoint,
    },
    region: "us-east-1",
    credentials,
    servers: { dynamodb: dynamo, fauxqs: fauxqsServers[0]! },
    async stop() {
      await Promise.all([stopDynamo(), fauxqs.stop()]);
    },
  };
}

/**
 * Runs `start` with every HTTP server it creates before its first `await` made to
 * listen on `host`, whatever address it asks for, and to refuse unsigned requests. fauxqs builds its Fastify app
 * (and so its server) synchronously, then calls `listen({ host: "0.0.0.0" })`;
 * `http.createServer` is only replaced for that synchronous stretch, when no
 * other code can run.
 */
function pinListenHost<T>(
  host: string,
  credentials: EmulatorCredentials,
  created: http.Server[],
  start: () => T,
): T {
  const createServer = http.createServer;
  // The overloads of createServer and listen cannot be forwarded with their types.
  http.createServer = ((...args: Parameters<typeof createServer>) => {
    const server = createServer(...args);
    // Fastify hands its handler to createServer: the check goes in front of it here.
    requireSignature(server, credentials);
    created.push(server);
    const listen = server.listen;
    server.listen = ((...listenArgs: unknown[]) => {
      const [first, ...rest] = listenArgs;
      const pinned = typeof first === "object" && first !== null ? { ...first, host } : first;
      return Reflect.apply(listen, server, [pinned, ...rest]);
    }) as typeof server.listen;
    return server;
  }) as typeof http.createServer;
  try {
    return start();
  } finally {
    http.createServer = createServer;
  }
}

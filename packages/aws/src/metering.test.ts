import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAwsClients } from "./clients";
import { meter } from "./metering";

describe("meter", () => {
  // A local stand-in for DynamoDB that records request sizes and answers `{}`.
  let server: Server;
  const bodies: number[] = [];
  let failNext = false;
  beforeAll(async () => {
    server = createServer((request, response) => {
      let size = 0;
      request.on("data", (chunk: Buffer) => {
        size += chunk.length;
      });
      request.on("end", () => {
        bodies.push(size);
        const status = failNext ? 500 : 200;
        failNext = false;
        response.writeHead(status, { "content-type": "application/x-amz-json-1.0" });
        response.end(
          status === 200 ? "{}" : '{"__type":"InternalServerError","message":"try again"}',
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function clients() {
    return createAwsClients({
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      endpoints: { dynamodb: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
    });
  }

  it("counts calls and request bytes per command, through the document client too", async () => {
    const c = clients();
    const m = meter(c.dynamodb);
    bodies.length = 0;
    await c.doc.send(
      new PutCommand({ TableName: "t", Item: { pk: "p", sk: "s", v: "x".repeat(100) } }),
    );
    await c.doc.send(new GetCommand({ TableName: "t", Key: { pk: "p", sk: "s" } }));
    await c.doc.send(new GetCommand({ TableName: "t", Key: { pk: "p", sk: "s" } }));
    const snapshot = m.snapshot();
    expect(snapshot.calls).toEqual({ PutItem: 1, GetItem: 2 });
    expect(snapshot.requestBytes.PutItem).toBe(bodies[0]);
    expect(snapshot.totalRequestBytes).toBe(bodies.reduce((a, b) => a + b, 0));
    expect(snapshot.totalCalls).toBe(3);
    m.reset();
    expect(m.snapshot()).toEqual({
      calls: {},
      requestBytes: {},
      totalCalls: 0,
      totalRequestBytes: 0,
    });
    c.destroy();
  });

  it("counts a command once however often the SDK retries it", async () => {
    const c = clients();
    const m = meter(c.dynamodb);
    bodies.length = 0;
    failNext = true;
    await c.doc.send(new GetCommand({ TableName: "t", Key: { pk: "p", sk: "s" } }));
    expect(bodies).toHaveLength(2);
    expect(m.snapshot().calls).toEqual({ GetItem: 1 });
    c.destroy();
  });
});

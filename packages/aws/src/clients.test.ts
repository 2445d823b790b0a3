import { describe, expect, it } from "vitest";
import { createAwsClients } from "./clients";

describe("createAwsClients", () => {
  it("gives each local endpoint to its client, S3 with path-style addressing", async () => {
    const clients = createAwsClients({
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      endpoints: {
        dynamodb: "http://127.0.0.1:1",
        sqs: "http://127.0.0.1:2",
        s3: "http://127.0.0.1:2",
      },
    });
    const endpoint = async (client: { config: { endpoint?: unknown } }) => {
      const provider = client.config.endpoint as (() => Promise<{ port?: number }>) | undefined;
      return (await provider?.())?.port;
    };
    expect(await endpoint(clients.dynamodb)).toBe(1);
    expect(await endpoint(clients.sqs)).toBe(2);
    expect(clients.s3.config.forcePathStyle).toBe(true);
    expect(await clients.sqs.config.credentials()).toMatchObject({ accessKeyId: "local" });
    clients.destroy();
  });

  it("leaves S3 virtual-hosted without an endpoint", () => {
    const clients = createAwsClients({ region: "eu-west-1" });
    expect(clients.s3.config.forcePathStyle).toBe(false);
    clients.destroy();
  });

  it("refuses local credentials with characters the emulators break on", () => {
    expect(() =>
      createAwsClients({
        region: "us-east-1",
        credentials: { accessKeyId: "local-key", secretAccessKey: "local" },
        endpoints: { dynamodb: "http://127.0.0.1:1" },
      }),
    ).toThrow(/'accessKeyId' must be letters and digits only/);
  });
});

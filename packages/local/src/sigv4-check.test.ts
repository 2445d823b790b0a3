import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { createAwsClients, S3Uploads } from "@stackvm/aws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { declaresPayloadHash, type SignedRequest, signatureProblem } from "./sigv4-check";

const credentials = { accessKeyId: "AKIALOCALTEST", secretAccessKey: "a".repeat(60) };

/** One request the real SDK client signed, caught by a listener that answers nothing useful. */
let captured: SignedRequest & { at: number };
let presigned: string;

beforeAll(async () => {
  let seen: { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer } | null =
    null;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      seen = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      res.writeHead(200, { "content-type": "application/x-amz-json-1.0" }).end('{"TableNames":[]}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clients = createAwsClients({
    endpoints: { dynamodb: endpoint, sqs: endpoint, s3: endpoint },
    region: "us-east-1",
    credentials,
  });
  try {
    const at = Date.now();
    await clients.dynamodb.send(new ListTablesCommand({}));
    captured = { ...seen!, at };
    presigned = await new S3Uploads(clients.s3, "blobs").presignPut(
      "t/a/doc.txt",
      "text/plain",
      60,
    );
  } finally {
    clients.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});
afterAll(() => undefined);

describe("signatureProblem on a header-signed request", () => {
  it("holds for the request as the SDK signed it", () => {
    expect(signatureProblem(captured, credentials, captured.at)).toBeNull();
  });

  it("refuses the request aimed at another operation (x-amz-target changed)", () => {
    const headers = { ...captured.headers, "x-amz-target": "DynamoDB_20120810.Scan" };
    expect(signatureProblem({ ...captured, headers }, credentials, captured.at)).toMatch(
      /does not match/,
    );
  });

  it("refuses a changed body", () => {
    const body = Buffer.from('{"ExclusiveStartTableName":"x"}');
    expect(signatureProblem({ ...captured, body }, credentials, captured.at)).toMatch(
      /does not match/,
    );
  });

  it("has its body read and checked: the DynamoDB client declares a hash, but only S3's bodies pass unread", () => {
    expect(captured.headers["x-amz-content-sha256"]).toBeDefined();
    expect(declaresPayloadHash(captured.url, captured.headers)).toBe(false);
    const s3 = {
      ...captured.headers,
      authorization: String(captured.headers.authorization).replace("/dynamodb/", "/s3/"),
    };
    expect(declaresPayloadHash(captured.url, s3)).toBe(true);
  });

  it("refuses an x-amz-* header the signature does not cover", () => {
    const headers = { ...captured.headers, "x-amz-copy-source": "/blobs/t/b/secret" };
    expect(signatureProblem({ ...captured, headers }, credentials, captured.at)).toMatch(
      /x-amz-copy-source is not signed/,
    );
  });

  it("refuses a replay more than 15 minutes after, or before, its date", () => {
    const minutes = 60 * 1000;
    expect(signatureProblem(captured, credentials, captured.at + 16 * minutes)).toMatch(
      /15 minutes/,
    );
    expect(signatureProblem(captured, credentials, captured.at - 16 * minutes)).toMatch(
      /15 minutes/,
    );
  });

  it("refuses the same request checked with another secret", () => {
    const other = { ...credentials, secretAccessKey: "b".repeat(60) };
    expect(signatureProblem(captured, other, captured.at)).toMatch(/does not match/);
  });
});

describe("signatureProblem on a presigned upload URL", () => {
  const url = () => {
    const parsed = new URL(presigned);
    return `${parsed.pathname}${parsed.search}`;
  };
  const put = (changes: Partial<SignedRequest> = {}) => ({
    method: "PUT",
    url: url(),
    headers: { host: new URL(presigned).host, "content-type": "text/plain" },
    ...changes,
  });

  it("holds for the upload it was made for", () => {
    expect(signatureProblem(put(), credentials, Date.now())).toBeNull();
  });

  it.each(["GET", "POST", "DELETE"])("refuses it replayed as %s", (method) => {
    expect(signatureProblem(put({ method }), credentials, Date.now())).toMatch(/does not match/);
  });

  it("refuses it for another bucket or key, or with a query parameter added", () => {
    for (const changed of [
      url().replace("/blobs/", "/other/"),
      url().replace("doc.txt", "doc2.txt"),
      `${url()}&uploads=`,
    ]) {
      expect(signatureProblem(put({ url: changed }), credentials, Date.now())).toMatch(
        /does not match/,
      );
    }
  });

  it("refuses it once expired", () => {
    expect(signatureProblem(put(), credentials, Date.now() + 61 * 1000)).toMatch(/expired/);
  });
});

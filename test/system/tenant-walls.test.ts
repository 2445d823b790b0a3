/**
 * Tenant walls (issue 29): an ordinary tenant, with its own key and its own
 * namespace settings, aims every outgoing path at the stack's own listeners
 * (the API, both emulators), at loopback by name and by numeric tricks, at
 * metadata and private addresses, through a redirect, and after a namespace
 * update. Each is refused before a byte reaches the target: the targets record
 * what reaches them (a raw TCP trap records every connection; the stack's own
 * servers record every request carrying the attack's marker), and the
 * attacker's task fails with the guard's error.
 *
 * Two stacks: one where the operator opened loopback (as a developer does to
 * call an MCP server on their machine, and as the test harness does), where the
 * stack's own ports must still be refused; one with nothing opened, where all
 * of loopback must be.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attackerKey, failedCall } from "../support/attacker";
import {
  LOOPBACK_SPELLINGS,
  METADATA_AND_PRIVATE_URLS,
  resolveWallsName as resolve,
} from "../support/hostile-addresses";
import { startTestStack, type TestStack } from "../support/stack";

const MARKER = "walls-marker";

interface Watch {
  /** Requests that carried the marker, per server. */
  marked: Record<string, string[]>;
  /** Connections the raw trap accepted. */
  trapConnections: number;
}

let open: TestStack;
let closed: TestStack;
let trap: ReturnType<typeof createTcpServer>;
let trapPort: number;
let redirector: Server;
let redirectorPort: number;
const watch: Watch = { marked: {}, trapConnections: 0 };
let attacker: { open: string; closed: string };

function watchMarked(name: string, server: Server) {
  watch.marked[name] = [];
  server.on("request", (req: IncomingMessage) => {
    if (req.url?.includes(MARKER) || req.headers["x-walls"] !== undefined) {
      watch.marked[name]!.push(`${req.method} ${req.url}`);
    }
  });
}

beforeAll(async () => {
  trap = createTcpServer((socket) => {
    watch.trapConnections++;
    socket.destroy();
  });
  await new Promise<void>((r) => trap.listen(0, "127.0.0.1", r));
  trapPort = (trap.address() as AddressInfo).port;
  const noSandbox = { run: async () => Promise.reject(new Error("no sandbox in this test")) };
  const env = { STACKVM_MAX_PLAN_UPDATES: "0" };
  open = await startTestStack({ env, resolve, sandbox: noSandbox });
  closed = await startTestStack({
    env: { ...env, STACKVM_OPEN_PRIVATE_RANGES: undefined },
    resolve,
    sandbox: noSandbox,
  });
  for (const [name, server] of Object.entries(open.stack.servers)) watchMarked(name, server);
  // A loopback server the open stack may reach, that redirects where it is told.
  redirector = createHttpServer((req, res) => {
    const to = new URL(req.url ?? "/", "http://x").searchParams.get("to") ?? "/";
    res.writeHead(302, { location: to }).end();
  });
  await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
  redirectorPort = (redirector.address() as AddressInfo).port;
  attacker = { open: await attackerKey(open), closed: await attackerKey(closed) };
}, 60_000);

afterAll(async () => {
  await Promise.all([open?.stop(), closed?.stop()]);
  trap?.close();
  redirector?.close();
});

/** The stack's own listeners, as `host:port`. */
function ownTargets(t: TestStack): Array<[string, number]> {
  return [
    ["the API", t.stack.port],
    ["DynamoDB (dynalite)", Number(new URL(t.stack.endpoints.dynamodb).port)],
    ["SQS and S3 (fauxqs)", Number(new URL(t.stack.endpoints.sqs).port)],
  ];
}

const allowAll = [
  "127.0.0.1",
  "0.0.0.0",
  "::1",
  "::ffff:127.0.0.1",
  "localhost",
  "sneaky.walls.test",
  "mapped.walls.test",
  "mixed.walls.test",
  "meta.walls.test",
  "private.walls.test",
  "169.254.169.254",
  "10.0.0.1",
];

async function putNamespace(
  t: TestStack,
  key: string,
  name: string,
  hosts: string[],
  tools: string[] = [],
) {
  const put = await t.api(
    "PUT",
    `/v1/namespaces/${name}`,
    { allowed_tools: ["http_request", ...tools], allowed_hosts: hosts },
    { key },
  );
  expect(put.status, JSON.stringify(put.body)).toBe(200);
}

function expectNothingArrived() {
  expect(watch.marked).toEqual({ api: [], dynamodb: [], fauxqs: [] });
  expect(watch.trapConnections).toBe(0);
}

describe("a tenant aiming http_request at the stack's own listeners (loopback opened by the operator)", () => {
  it("is refused for every listener, every spelling of loopback, before a byte arrives", async () => {
    await putNamespace(open, attacker.open, "lo", allowAll);
    // Every spelling at DynamoDB (the port the attack used); three at the others.
    const cases = ownTargets(open).flatMap(([what, port]) =>
      (what.startsWith("DynamoDB")
        ? LOOPBACK_SPELLINGS
        : ["127.1", "[::1]", "sneaky.walls.test"]
      ).map((host) => [what, `http://${host}:${port}/${MARKER}`] as const),
    );
    const errors = await Promise.all(
      cases.map(([, url]) =>
        failedCall(open, attacker.open, "lo", "http_request", {
          url,
          method: "POST",
          headers: { "x-walls": "1", "x-amz-target": "DynamoDB_20120810.ListTables" },
          body: "{}",
        }),
      ),
    );
    errors.forEach((error, i) => {
      expect(error, cases[i]![1]).toMatchObject({ code: "address_forbidden" });
      expect(error.message, cases[i]![1]).toMatch(/own listeners|allowed_hosts cannot open/);
    });
    expectNothingArrived();
  }, 120_000);

  it("is refused through a redirect to an own listener or the metadata address", async () => {
    await putNamespace(open, attacker.open, "redir", allowAll);
    const [, dynamoPort] = ownTargets(open)[1]!;
    const targets = [
      `http://127.0.0.1:${dynamoPort}/${MARKER}`,
      `http://127.1:${open.stack.port}/${MARKER}`,
      `http://sneaky.walls.test:${dynamoPort}/${MARKER}`,
      "http://169.254.169.254/latest/meta-data/",
    ];
    const errors = await Promise.all(
      targets.map((to) =>
        failedCall(open, attacker.open, "redir", "http_request", {
          url: `http://127.0.0.1:${redirectorPort}/?to=${encodeURIComponent(to)}`,
          headers: { "x-walls": "1" },
        }),
      ),
    );
    for (const error of errors) expect(error).toMatchObject({ code: "address_forbidden" });
    expectNothingArrived();
  }, 60_000);

  it("is refused for metadata and private addresses whatever allowed_hosts says", async () => {
    await putNamespace(open, attacker.open, "meta", allowAll);
    const urls = METADATA_AND_PRIVATE_URLS;
    const errors = await Promise.all(
      urls.map((url) => failedCall(open, attacker.open, "meta", "http_request", { url })),
    );
    errors.forEach((error, i) => {
      expect(error, urls[i]).toMatchObject({ code: "address_forbidden" });
      expect(error.message, urls[i]).toMatch(/metadata|link-local|private/);
    });
  }, 60_000);
});

describe("a tenant registering HTTP tools, MCP servers and webhooks at the stack's own listeners", () => {
  it("is refused at registration for an address, and at the call for a name", async () => {
    await putNamespace(open, attacker.open, "tools", ["sneaky.walls.test"]);
    const [, dynamoPort] = ownTargets(open)[1]!;
    const literal = await open.api(
      "POST",
      "/v1/namespaces/tools/http-tools",
      {
        name: "lit",
        description: "x",
        url: `http://127.0.0.1:${dynamoPort}/${MARKER}`,
        input_schema: { type: "object" },
      },
      { key: attacker.open },
    );
    expect(literal.status).toBe(422);
    expect(literal.body.error.message).toMatch(/own listeners/);
    // A name passes registration (it may resolve anywhere later); the call is refused.
    const named = await open.api(
      "POST",
      "/v1/namespaces/tools/http-tools",
      {
        name: "named",
        description: "x",
        url: `https://sneaky.walls.test:${dynamoPort}/${MARKER}`,
        input_schema: { type: "object" },
      },
      { key: attacker.open },
    );
    expect(named.status, JSON.stringify(named.body)).toBe(201);
    // After a namespace update that lists every loopback spelling: still refused.
    await putNamespace(open, attacker.open, "tools", allowAll);
    const error = await failedCall(open, attacker.open, "tools", "named", {});
    expect(error).toMatchObject({ code: "address_forbidden" });
    expect(error.message).toMatch(/own listeners/);

    for (const url of [
      `http://127.0.0.1:${open.stack.port}/mcp`,
      `https://sneaky.walls.test:${dynamoPort}/${MARKER}`,
      `http://[::1]:${Number(new URL(open.stack.endpoints.sqs).port)}/${MARKER}`,
    ]) {
      const mcp = await open.api(
        "POST",
        "/v1/namespaces/tools/mcp-servers",
        { name: "evil", url },
        { key: attacker.open },
      );
      expect(mcp.status, url).toBeGreaterThanOrEqual(400);
      expect(mcp.status, url).toBeLessThan(500);
      expect(JSON.stringify(mcp.body), url).toMatch(/own listeners|allowed_hosts cannot open/);
    }
    const tools = await open.api("GET", "/v1/tools?namespace=tools", undefined, {
      key: attacker.open,
    });
    expect(tools.body.tools.map((tool: { name: string }) => tool.name)).not.toContain("evil");
    expectNothingArrived();
  }, 60_000);

  it("cannot point a webhook at an own listener, by address or by name", async () => {
    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];
    const literal = await open.api(
      "POST",
      "/v1/tasks",
      { plan, webhook_url: `http://127.0.0.1:${open.stack.port}/${MARKER}` },
      { key: attacker.open },
    );
    expect(literal.status).toBe(422);
    expect(literal.body.error.message).toMatch(/own listeners/);
    const dynamoPort = Number(new URL(open.stack.endpoints.dynamodb).port);
    const named = await open.api(
      "POST",
      "/v1/tasks",
      { plan, webhook_url: `https://sneaky.walls.test:${dynamoPort}/${MARKER}` },
      { key: attacker.open },
    );
    // The name is resolved at the door too (delivery checks each connection again).
    expect(named.status, JSON.stringify(named.body)).toBe(422);
    expect(named.body.error).toMatchObject({ code: "bad_webhook_url" });
    expect(named.body.error.message).toMatch(/own listeners/);
    expectNothingArrived();
  }, 90_000);
});

describe("a tenant aiming at loopback where the operator opened nothing", () => {
  it("is refused for every spelling of loopback, the trap sees no connection", async () => {
    await putNamespace(closed, attacker.closed, "lo", allowAll);
    const urls = LOOPBACK_SPELLINGS.map((host) => `http://${host}:${trapPort}/${MARKER}`);
    const errors = await Promise.all(
      urls.map((url) => failedCall(closed, attacker.closed, "lo", "http_request", { url })),
    );
    errors.forEach((error, i) => {
      expect(error, urls[i]).toMatchObject({ code: "address_forbidden" });
      expect(error.message, urls[i]).toMatch(/loopback|unspecified/);
    });
    const mcp = await closed.api(
      "POST",
      "/v1/namespaces/lo/mcp-servers",
      { name: "local", url: `http://127.0.0.1:${trapPort}/mcp` },
      { key: attacker.closed },
    );
    expect(mcp.status).toBe(422);
    expect(mcp.body.error.message).toMatch(/STACKVM_OPEN_PRIVATE_RANGES/);
    expect(watch.trapConnections).toBe(0);
  }, 120_000);
});

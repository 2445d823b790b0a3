/**
 * What the API answers to requests it cannot read (issue 18): a body that is
 * not sent as JSON (415 with the header to send), text sent as JSON that is not
 * JSON (400 with where it breaks), and a method a path does not take (405 with
 * `Allow`). Each answer has the error shape and leaves nothing behind.
 */
import { Agent, request } from "node:http";
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

const t = useTestStack();

const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }];

/** A request with exactly these headers and body (the helper always adds JSON's). */
async function send(method: string, path: string, body: string | null, type?: string) {
  const response = await fetch(`${t.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${t.apiKey}`,
      ...(type === undefined ? {} : { "content-type": type }),
    },
    ...(body === null ? {} : { body }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const taskCount = async () => (await t.api("GET", "/v1/tasks")).body.tasks.length;

describe("a body that is not sent as JSON", () => {
  it.each([
    ["without a Content-Type", undefined, "without a Content-Type"],
    ["as text/plain", "text/plain", "as text/plain"],
    ["as form data", "application/x-www-form-urlencoded", "as application/x-www-form-urlencoded"],
  ])("answers 415 %s, naming the header to send, and starts no task", async (_, type, said) => {
    const before = await taskCount();
    // fetch sends a string body as text/plain unless told otherwise: a Blob without a type sends none.
    const body =
      type === undefined ? new Blob([JSON.stringify({ plan })]) : JSON.stringify({ plan });
    const response = await fetch(`${t.url}/v1/tasks`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${t.apiKey}`,
        ...(type === undefined ? {} : { "content-type": type }),
      },
      body,
    });
    expect(response.status).toBe(415);
    const answer = await response.json();
    expect(answer.error.code).toBe("unsupported_media_type");
    expect(answer.error.message).toContain(said);
    expect(answer.error.message).toContain("send the header Content-Type: application/json");
    expect(answer.error.details.expected).toBe("application/json");
    expect(await taskCount()).toBe(before);
  });

  it("does not echo a long hostile Content-Type back whole", async () => {
    const type = `text/${"x".repeat(4000)}<script>`;
    const answer = await send("POST", "/v1/tasks", JSON.stringify({ plan }), type);
    expect(answer.status).toBe(415);
    expect(answer.body.error.details.content_type.length).toBeLessThanOrEqual(100);
    expect(answer.body.error.message).not.toContain("<script>");
  });

  it("accepts JSON sent with a charset parameter", async () => {
    const answer = await send(
      "POST",
      "/v1/tasks",
      JSON.stringify({ plan }),
      "application/json; charset=utf-8",
    );
    expect(answer.status).toBe(202);
  });
});

describe("text sent as JSON that is not JSON", () => {
  it.each([
    ['{"plan": [', 1, 11, "a value"],
    ['{"goal": "a"\n  "namespace": "default"}', 2, 3, "',' or '}'"],
    ["{'goal': 'a'}", 1, 2, "a property name in double quotes"],
    ['{"goal": "a",}', 1, 14, "a property name in double quotes"],
    ['{"goal": "a"} trailing', 1, 15, "the end of the body"],
  ])("answers 400 to %j with its line and column", async (raw, line, column, expected) => {
    const before = await taskCount();
    const answer = await send("POST", "/v1/tasks", raw, "application/json");
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("malformed_json");
    expect(answer.body.error.details).toMatchObject({ line, column });
    expect(answer.body.error.message).toContain(`line ${line}, column ${column}`);
    expect(answer.body.error.message).toContain(expected);
    expect(await taskCount()).toBe(before);
  });

  it("answers 400 to an empty body on a route that reads one", async () => {
    const answer = await send("POST", "/v1/tasks", "", "application/json");
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("malformed_json");
    expect(answer.body.error.message).toContain("the request body is empty");
  });

  it("answers 400, not 500, to thousands of unclosed brackets", async () => {
    const answer = await send("POST", "/v1/tasks", "[".repeat(50_000), "application/json");
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: "malformed_json",
      details: { offset: 50_000 },
    });
  });

  it("answers 400 on every route that reads JSON, the same way", async () => {
    for (const [method, path] of [
      ["PUT", "/v1/namespaces/broken"],
      ["POST", "/v1/plans/validate"],
      ["POST", "/v1/schedules"],
    ] as const) {
      const answer = await send(method, path, '{"a": nope}', "application/json");
      expect(answer.status, path).toBe(400);
      expect(answer.body.error.details, path).toMatchObject({ line: 1, column: 7 });
    }
  });
});

describe("a method that a path does not take", () => {
  it.each([
    ["PUT", "/v1/tasks", "GET, HEAD, POST"],
    ["DELETE", "/v1/tasks", "GET, HEAD, POST"],
    ["PATCH", "/v1/namespaces", "GET, HEAD"],
    ["POST", "/v1/tools", "GET, HEAD"],
    ["PUT", "/v1/tasks/some-task/cancel", "POST"],
    ["PATCH", "/v1/tasks/some-task", "DELETE, GET, HEAD"],
    ["GET", "/v1/plans/validate", "POST"],
  ])("answers 405 to %s %s with Allow: %s", async (method, path, allow) => {
    const before = await taskCount();
    const answer = await send(
      method,
      path,
      method === "GET" ? null : JSON.stringify({ plan }),
      "application/json",
    );
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe(allow);
    expect(answer.body.error.code).toBe("method_not_allowed");
    expect(answer.body.error.message).toContain(`takes ${allow}`);
    expect(await taskCount()).toBe(before);
  });

  it("still answers 404 to a path that no route has", async () => {
    const answer = await send("PUT", "/v1/nowhere", "{}", "application/json");
    expect(answer.status).toBe(404);
    expect(answer.headers.get("allow")).toBeNull();
    expect(answer.body.error.code).toBe("not_found");
  });

  it("asks for the key before it says which methods a path takes", async () => {
    const response = await fetch(`${t.url}/v1/tasks`, { method: "PUT" });
    expect(response.status).toBe(401);
    expect(response.headers.get("allow")).toBeNull();
  });
});

describe("a body over the limit", () => {
  /** POSTs `bytes` of JSON on a keep-alive agent; the status and `Connection` header. */
  const post = (agent: Agent, bytes: number) =>
    new Promise<{ status: number; connection: string | undefined }>((done, fail) => {
      const body = JSON.stringify({ plan, metadata: { pad: "x".repeat(bytes) } });
      const req = request(`${t.url}/v1/tasks`, {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${t.apiKey}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      });
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => done({ status: res.statusCode!, connection: res.headers.connection }));
      });
      req.on("error", fail);
      req.end(body);
    });

  it("answers 413 with Connection: close, and the client's next request works", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await post(agent, 2 << 20);
      expect(refused.status).toBe(413);
      expect(refused.connection).toBe("close");
      const next = await post(agent, 10);
      expect(next.status).toBe(202);
      expect(next.connection).toBe("keep-alive");
    } finally {
      agent.destroy();
    }
  });
});

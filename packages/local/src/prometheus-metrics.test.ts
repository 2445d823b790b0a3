import type { SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { localMetrics } from "./prometheus-metrics";

const sqs = {
  send: async () => ({
    Attributes: { ApproximateNumberOfMessages: "2", ApproximateNumberOfMessagesNotVisible: "1" },
  }),
} as unknown as SQSClient;
const metrics = (adminKey: string | null) =>
  localMetrics({ sqs, queueUrl: "http://q/steps", dlqUrl: "http://q/dlq", adminKey });
const get = (headers: Record<string, string> = {}) =>
  new Request("http://127.0.0.1:3000/metrics", { headers });

describe("localMetrics", () => {
  it("refuses a request from another machine, even with the operator key", async () => {
    for (const address of ["10.0.0.5", "192.168.1.2", "::ffff:10.0.0.5", "fe80::1", undefined]) {
      const answer = await metrics("k".repeat(32)).answer(
        get({ authorization: `Bearer ${"k".repeat(32)}` }),
        address,
      );
      expect(answer?.status).toBe(403);
    }
  });

  it("refuses a request a proxy on this machine forwarded, with the key or without one set", async () => {
    // A tunnel or reverse proxy to the laptop connects from loopback: its headers say where the request came from.
    for (const header of ["x-forwarded-for", "forwarded", "x-real-ip", "x-forwarded-host"]) {
      for (const m of [metrics(null), metrics("k".repeat(32))]) {
        const answer = await m.answer(
          get({ [header]: "203.0.113.7", authorization: `Bearer ${"k".repeat(32)}` }),
          "127.0.0.1",
        );
        expect(answer?.status, header).toBe(403);
        expect(await answer?.text()).toContain("a request a proxy forwarded");
      }
    }
  });

  it("refuses loopback without the operator key where one is set, and answers with it", async () => {
    const m = metrics("k".repeat(32));
    expect((await m.answer(get(), "127.0.0.1"))?.status).toBe(401);
    expect((await m.answer(get({ authorization: "Bearer wrong" }), "::1"))?.status).toBe(401);
    const ok = await m.answer(get({ authorization: `Bearer ${"k".repeat(32)}` }), "127.0.0.1");
    expect(ok?.status).toBe(200);
    expect(await ok?.text()).toContain("stackvm_queue_depth 3");
  });

  it("answers loopback alone where no operator key is set, and leaves other paths to the API", async () => {
    const m = metrics(null);
    expect((await m.answer(get(), "127.0.0.1"))?.status).toBe(200);
    expect(m.answer(new Request("http://127.0.0.1:3000/metrics/x"), "127.0.0.1")).toBeNull();
    expect(m.answer(new Request("http://127.0.0.1:3000/v1/tasks"), "127.0.0.1")).toBeNull();
  });
});

/**
 * The API's first requests in a fresh process, for `npm run bundle`: the API's
 * app (`createApp`, the same as the Lambda entry's) over the whole system with
 * the in-memory store, blobs and queue in place of DynamoDB, S3 and SQS, which
 * cannot be reached here. Bundled like the API (scripts/bundles.ts), so each
 * group of routes is a chunk loaded on its first request, as on Lambda.
 * `firstRequests` makes an API key (the key check is middleware, loaded at
 * start), then times a task's start from a plan (`POST /v1/tasks`: loads the
 * task routes and the plan check) and the first read of the OpenAPI document
 * (loads every other group and builds the document).
 */
import { createApp } from "@stackvm/api";
import { silentLog, systemClock } from "@stackvm/core";
import { MemoryBlobs, MemoryItemStore, MemoryQueue } from "@stackvm/core/testing";
import { loadConfig } from "../packages/functions/src/config";
import { llmPort } from "../packages/functions/src/llm-port";
import { createSystem } from "../packages/functions/src/system";
import { systemOptions } from "../packages/functions/src/system-options";

const config = loadConfig(process.env);
const system = createSystem(
  {
    items: new MemoryItemStore(),
    blobs: new MemoryBlobs({ clock: systemClock }),
    queue: new MemoryQueue({ clock: systemClock }),
    clock: systemClock,
    sandbox: { run: () => Promise.reject(new Error("the probe runs no code")) },
    llm: llmPort(config),
  },
  systemOptions(config, silentLog, false),
);
const app = createApp(system.api);

/** Milliseconds of each first request, by what it asked. */
export interface FirstRequests {
  startTask: number;
  openapi: number;
}

async function timed(
  request: () => Response | Promise<Response>,
  expected: number,
): Promise<number> {
  const started = performance.now();
  const answer = await request();
  const ms = performance.now() - started;
  if (answer.status !== expected) {
    throw new Error(`the probe's request answered ${answer.status}: ${await answer.text()}`);
  }
  return ms;
}

export async function firstRequests(): Promise<FirstRequests> {
  const { key } = await system.api.keys.create("probe", "probe");
  const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "hello" } }];
  const startTask = await timed(
    () =>
      app.request("/v1/tasks", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ plan }),
      }),
    202,
  );
  const openapi = await timed(() => app.request("/openapi.json"), 200);
  return { startTask, openapi };
}

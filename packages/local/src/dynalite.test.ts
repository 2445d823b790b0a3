/**
 * The embedded DynamoDB (dynalite, patched in `patches/`) for a stack left
 * running for weeks: a query closes its LevelDB iterator, and an item and its
 * index entries are written at once, so that a kill between them cannot leave
 * GetItem and an index query disagreeing (issue 13, findings 9 and 10).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createAwsClients, DynamoItemStore } from "@stackvm/aws";
import { afterAll, describe, expect, it } from "vitest";
import { bootstrap } from "./bootstrap";
import { startEmulators } from "./emulators";

const names = { table: "stackvm", queue: "q", dlq: "q-dlq", bucket: "kill-test" };
const root = resolve(import.meta.dirname, "../../..");

/** Counts LevelDB resources (iterators) that dynalite's database holds open. */
function countOpenIterators(): { open: () => number; restore: () => void } {
  // The abstract-level that dynalite's `level` uses, wherever npm placed it.
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve("dynalite"));
  const fromLevel = createRequire(fromDynalite.resolve("level"));
  const { AbstractLevel } = fromLevel(fromLevel.resolve("abstract-level")) as {
    AbstractLevel: { prototype: Record<string, (resource: unknown) => void> };
  };
  const proto = AbstractLevel.prototype;
  const attach = proto.attachResource!;
  const detach = proto.detachResource!;
  const held = new Set<unknown>();
  proto.attachResource = function (this: unknown, resource: unknown) {
    held.add(resource);
    attach.call(this, resource);
  };
  proto.detachResource = function (this: unknown, resource: unknown) {
    held.delete(resource);
    detach.call(this, resource);
  };
  return {
    open: () => held.size,
    restore: () => {
      proto.attachResource = attach;
      proto.detachResource = detach;
    },
  };
}

describe("the embedded DynamoDB", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["in memory", false],
    ["on disk", true],
  ])("leaves no iterator open after queries (%s)", async (_, onDisk) => {
    const counter = countOpenIterators();
    const dir = onDisk ? await mkdtemp(join(tmpdir(), "stackvm-dynalite-")) : null;
    if (dir) dirs.push(dir);
    const emulators = await startEmulators({ dataDir: dir });
    const clients = createAwsClients(emulators);
    try {
      await bootstrap(clients, names);
      const store = new DynamoItemStore(clients.doc, names.table);
      for (let i = 0; i < 30; i++) {
        await store.put({
          pk: "P",
          sk: `s#${String(i).padStart(2, "0")}`,
          gsi1pk: "G",
          gsi1sk: `${i}`,
        });
      }
      // Pages that stop early (limit), pages read to the end, index queries, empty ones.
      for (let i = 0; i < 50; i++) {
        await store.query({ pk: "P", prefix: "s#", limit: 3 });
        await store.query({ pk: "P", prefix: "s#" });
        await store.query({ pk: "G", index: "gsi1", limit: 2 });
        await store.query({ pk: "none" });
      }
      expect(counter.open()).toBeLessThan(5);
    } finally {
      counter.restore();
      clients.destroy();
      await emulators.stop();
    }
  });

  it("keeps an item and its index entries together when killed mid-write", async () => {
    const dir = await mkdtemp(join(tmpdir(), "stackvm-dynalite-kill-"));
    dirs.push(dir);
    for (let kill = 0; kill < 3; kill++) await writeThenKill(dir, 40 + kill * 37);
    const emulators = await startEmulators({ dataDir: dir });
    const clients = createAwsClients(emulators);
    try {
      const store = new DynamoItemStore(clients.doc, names.table);
      const split: string[] = [];
      for (let i = 0; i < 40; i++) {
        const item = await store.get({ pk: "KILL", sk: `item#${i}` });
        const page = await store.query({ pk: "KILL", index: "gsi1", prefix: `item#${i}#` });
        const indexed = page.items.map((entry) => entry.v);
        if (item === null ? indexed.length > 0 : indexed.join() !== item.v) {
          split.push(`item ${i}: GetItem ${String(item?.v)}, index ${indexed.join() || "none"}`);
        }
      }
      expect(split).toEqual([]);
    } finally {
      clients.destroy();
      await emulators.stop();
    }
  });
});

/** Runs the writer child on `dir` and kills it with SIGKILL `afterMs` after it started writing. */
async function writeThenKill(dir: string, afterMs: number): Promise<void> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "testing/dynalite-writer.ts"), dir],
    { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise((done) => child.once("exit", done));
  await new Promise<void>((done, fail) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("writing")) done();
    });
    child.once("exit", (code) => fail(new Error(`the writer exited early (${code})`)));
  });
  await new Promise((done) => setTimeout(done, afterMs));
  child.kill("SIGKILL");
  await exited;
}

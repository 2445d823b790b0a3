import { readdir, readFile, readlink } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleLog } from "./console-log";
import { type LocalStack, startLocalStack } from "./stack";

interface Listener {
  address: string;
  port: number;
}

/** An address of /proc/net/tcp or tcp6: 32-bit words in hex, each in the host's (little-endian) byte order. */
function decodeAddress(hex: string): string {
  const bytes = (hex.match(/.{8}/g) ?? []).flatMap((word) =>
    (word.match(/../g) ?? []).map((byte) => Number.parseInt(byte, 16)).reverse(),
  );
  if (bytes.length === 4) return bytes.join(".");
  const groups = [];
  for (let i = 0; i < 16; i += 2)
    groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(":");
}

function isLoopback(address: string): boolean {
  return (
    address.startsWith("127.") ||
    address === "0:0:0:0:0:0:0:1" ||
    address.startsWith("0:0:0:0:0:ffff:7f") // IPv4-mapped 127.0.0.0/8
  );
}

/** This process and every process under it (the sandbox host and its children). */
async function processTree(pid = "self"): Promise<string[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => []);
  const children = [];
  for (const task of tasks) {
    const list = await readFile(`/proc/${pid}/task/${task}/children`, "utf8").catch(() => "");
    children.push(...list.split(" ").filter((child) => child.trim() !== ""));
  }
  const below = await Promise.all(children.map((child) => processTree(child.trim())));
  return [pid, ...below.flat()];
}

/**
 * The TCP sockets that a process listens on: the listening entries of the
 * kernel's tables (of the process's network namespace) whose socket inode is one
 * of the process's file descriptors. A process whose descriptors may not be read
 * runs as another user in a user namespace of its own: a sandboxed child, whose
 * network namespace has no route out, so nothing it listens on is reachable.
 */
async function listeners(pid: string): Promise<Listener[]> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  const inodes = new Set<string>();
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const found: Listener[] = [];
  for (const table of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    const rows = (await readFile(table, "utf8").catch(() => "")).trim().split("\n").slice(1);
    for (const row of rows) {
      const [, local, , state, , , , , , inode] = row.trim().split(/\s+/);
      if (state !== "0A" || !local || !inode || !inodes.has(inode)) continue; // 0A: LISTEN
      const [address = "", port = ""] = local.split(":");
      found.push({ address: decodeAddress(address), port: Number.parseInt(port, 16) });
    }
  }
  return found;
}

describe.runIf(process.platform === "linux")("the local stack's listeners", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ dataDir: null, port: 0, log: consoleLog({ level: "silent" }) });
  });
  afterAll(() => stack.stop());

  it("listens on loopback only: the API, dynalite, fauxqs and any process under it", async () => {
    const found = (await Promise.all((await processTree()).map(listeners))).flat();
    const ports = [stack.url, stack.endpoints.dynamodb, stack.endpoints.sqs].map((url) =>
      Number(new URL(url).port),
    );
    expect(found.map((l) => l.port)).toEqual(expect.arrayContaining(ports));
    expect(found.filter((l) => !isLoopback(l.address))).toEqual([]);
  });
});

/**
 * Every function's deployed package, built as SST builds it for the function's
 * own architecture (scripts/function-packages.ts), within Lambda's limits. The
 * installs are cached under `.stackvm/installs/` (git-ignored): on a warm
 * machine this file only bundles; a fresh clone installs LanceDB, Arrow and
 * unpdf for the knowledge function and the API's and the sandbox's packages
 * from the npm registry once (about a minute on a loaded 2-core machine).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { npmCpu } from "../../infra/function-installs";
import { knowledgeArchitecture } from "../../infra/knowledge-installs";
import { entries } from "../../scripts/bundles";
import {
  buildPackage,
  elfArchitecture,
  type FunctionPackage,
  nativeModules,
  packageProblems,
  packagesDir,
  UNZIPPED_LIMIT_BYTES,
  ZIP_LIMIT_BYTES,
} from "../../scripts/function-packages";

const built = new Map<string, FunctionPackage>();

beforeAll(async () => {
  for (const entry of entries) {
    built.set(entry.name, await buildPackage(entry, join(packagesDir, `test-${entry.name}`)));
  }
  // Printed so that a run shows each package beside the limits.
  for (const p of built.values()) {
    console.log(
      `${p.name} (${p.arch}): ${(p.unzippedBytes / 2 ** 20).toFixed(1)} MB unzipped, zip ${(p.zipBytes / 2 ** 20).toFixed(1)} MB`,
    );
  }
}, 600_000);

const pkg = (name: string) => {
  const found = built.get(name);
  if (!found) throw new Error(`no package for ${name}`);
  return found;
};

describe("each function's deployed package", () => {
  it.each(entries.map((e) => e.name))("fits Lambda's limits: %s", (name) => {
    const p = pkg(name);
    expect(packageProblems(p)).toEqual([]);
    expect(p.unzippedBytes).toBeLessThanOrEqual(UNZIPPED_LIMIT_BYTES);
    if (p.zipLimited) expect(p.zipBytes).toBeLessThanOrEqual(ZIP_LIMIT_BYTES);
  });

  it("carries LanceDB's native module built for the knowledge function's architecture, and no other", async () => {
    const natives = await nativeModules(pkg("knowledge").dir);
    const lance = natives.filter((f) => f.startsWith("node_modules/@lancedb/"));
    expect(lance).toEqual([
      `node_modules/@lancedb/lancedb-linux-${npmCpu(knowledgeArchitecture)}-gnu/lancedb.linux-${npmCpu(knowledgeArchitecture)}-gnu.node`,
    ]);
    // Read from its ELF header: an arm64 binary cannot be loaded on this machine to ask it.
    for (const file of natives) {
      expect(await elfArchitecture(join(pkg("knowledge").dir, file)), file).toBe(
        knowledgeArchitecture,
      );
    }
  });

  it("builds each function for the architecture it is deployed on: Graviton, the knowledge function x86_64", () => {
    // The knowledge function stays on x86_64 while the registry has no linux-arm64
    // build of the pinned LanceDB (infra/knowledge-installs.ts, docs/deploy.md).
    expect(Object.fromEntries([...built.values()].map((p) => [p.name, p.arch]))).toEqual({
      api: "arm64",
      worker: "arm64",
      sandbox: "arm64",
      scheduler: "arm64",
      sweep: "arm64",
      dlq: "arm64",
      knowledge: knowledgeArchitecture,
    });
    expect(knowledgeArchitecture).toBe("x86_64");
  });

  it("installs the native package of the pinned LanceDB itself, for the knowledge function's cpu", async () => {
    const dir = pkg("knowledge").dir;
    const read = async (name: string) =>
      JSON.parse(await readFile(join(dir, "node_modules", name, "package.json"), "utf8")) as {
        version: string;
        os?: string[];
        cpu?: string[];
        libc?: string[];
      };
    const lancedb = await read("@lancedb/lancedb");
    const native = await read(`@lancedb/lancedb-linux-${npmCpu(knowledgeArchitecture)}-gnu`);
    expect(native.version).toBe(lancedb.version);
    expect(native.os).toEqual(["linux"]);
    expect(native.cpu).toEqual([npmCpu(knowledgeArchitecture)]);
  });

  it("leaves LanceDB's optional embeddings runtime (300 MB of onnxruntime) out of the knowledge package", async () => {
    const natives = await nativeModules(pkg("knowledge").dir);
    expect(natives.filter((f) => /onnxruntime|@huggingface|sharp/.test(f))).toEqual([]);
  });

  it("gives the worker nothing beside its bundle and no native module", async () => {
    expect(pkg("worker").installBytes).toBe(0);
    expect(await nativeModules(pkg("worker").dir)).toEqual([]);
  });

  it("has no native module for another architecture in any package", async () => {
    for (const p of built.values()) {
      for (const file of await nativeModules(p.dir)) {
        expect(await elfArchitecture(join(p.dir, file)), `${p.name}: ${file}`).toBe(p.arch);
      }
    }
  });
});

describe("the package check", () => {
  it("refuses a package over 250 MB unzipped, or a zip over 50 MB uploaded directly", () => {
    const knowledge = pkg("knowledge");
    expect(packageProblems({ ...knowledge, unzippedBytes: UNZIPPED_LIMIT_BYTES + 1 })).toEqual([
      expect.stringContaining("knowledge: 250.0 MB unzipped, over Lambda's 250.0 MB"),
    ]);
    expect(packageProblems({ ...pkg("api"), zipBytes: ZIP_LIMIT_BYTES + 1 })).toEqual([
      expect.stringContaining("api: its zip is 50.0 MB, over the 50.0 MB of a direct upload"),
    ]);
  });

  it("measures the real package: with limits just below its size, the knowledge package is refused", () => {
    const knowledge = pkg("knowledge");
    expect(
      packageProblems(knowledge, { unzipped: knowledge.unzippedBytes - 1, zip: ZIP_LIMIT_BYTES }),
    ).toHaveLength(1);
  });

  it("reads the architecture from an ELF header, and refuses a file that is not ELF", async () => {
    const dir = pkg("worker").dir;
    const header = (machine: number) => {
      const bytes = Buffer.alloc(64);
      bytes.writeUInt32BE(0x7f454c46, 0);
      bytes[4] = 2; // 64-bit
      bytes[5] = 1; // little-endian
      bytes.writeUInt16LE(machine, 18);
      return bytes;
    };
    await writeFile(join(dir, "arm.node"), header(183));
    await writeFile(join(dir, "x86.node"), header(62));
    await writeFile(join(dir, "text.node"), "not a binary at all, long enough to read");
    expect(await elfArchitecture(join(dir, "arm.node"))).toBe("arm64");
    expect(await elfArchitecture(join(dir, "x86.node"))).toBe("x86_64");
    await expect(elfArchitecture(join(dir, "text.node"))).rejects.toThrow("is not an ELF object");
  });
});

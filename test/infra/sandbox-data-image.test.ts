/**
 * The data sandbox function's image, as far as it can be checked without
 * Docker (a deploy builds it): its Dockerfile pins what the local data engine
 * runs, its content fits Lambda's 10 GB for an image, and the runner bundled
 * into it answers a pandas run as its own Lambda runtime.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DATA_LIBRARIES } from "@stackvm/core/sandbox-data-libraries";
import type { SandboxResponse } from "@stackvm/core/sandbox-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildDataImageContext,
  dataDockerfile,
  dataRuntimeFile,
} from "../../infra/sandbox-data-image";
import {
  FAKE_REQUEST_ID,
  type RuntimeApiFake,
  startRuntimeApiFake,
} from "../../packages/functions/src/testing/runtime-api-fake";
import { dataImageContent, LAMBDA_IMAGE_BYTES } from "./data-image-size";
import { projectRoot } from "./sst-harness";

const dockerfile = readFileSync(join(projectRoot, dataDockerfile), "utf8");
const setup = readFileSync(join(projectRoot, "scripts/setup-system.sh"), "utf8");

/** The `name=version` pins of the Dockerfile's apt-get install. */
const dockerPins = [...dockerfile.matchAll(/^\s+(python3[\w.-]*)=(\S+)/gm)].map(
  ([, name, version]) => [name ?? "", version ?? ""] as const,
);

describe("the data sandbox's Dockerfile", () => {
  it("pins the same Debian packages as setup-system.sh and the sandbox's pins", () => {
    const setupPins = new Map(
      [...(/data=\(([^)]*)\)/.exec(setup)?.[1] ?? "").matchAll(/(\S+?)=(\S+)/g)].map(
        ([, name, version]) => [name, version],
      ),
    );
    expect(new Map(dockerPins)).toEqual(setupPins);
    for (const pin of Object.values(DATA_LIBRARIES)) {
      const version = new Map(dockerPins).get(pin.debian);
      expect(version, `${pin.debian} in the Dockerfile`).toBeDefined();
      expect(version?.replace(/^\d+:/, "").replace(/\*$/, "")).toBe(pin.version);
    }
  });

  it("builds on Debian 12, with the Node that package.json pins, and runs the bundled runner", () => {
    const node = (
      JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies.node;
    const froms = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map(([, image]) => image);
    expect(froms).toEqual([
      `node:${node}-bookworm-slim`,
      expect.stringMatching(/^debian:12\.\d+-slim$/),
    ]);
    expect(dockerfile).toMatch(/^COPY runtime\/ \/opt\/stackvm\/$/m);
    const entry = dataRuntimeFile.slice(dataRuntimeFile.lastIndexOf("/") + 1);
    expect(dockerfile).toContain(`ENTRYPOINT ["/usr/local/bin/node", "/opt/stackvm/${entry}"]`);
  });
});

describe("the data sandbox's image content", () => {
  let context: string;
  let fake: RuntimeApiFake;

  beforeAll(async () => {
    context = mkdtempSync(join(tmpdir(), "stackvm-data-image-"));
    chmodSync(context, 0o755);
    await buildDataImageContext(context, projectRoot);
    fake = await startRuntimeApiFake();
  });

  afterAll(async () => {
    await fake.close();
    rmSync(context, { recursive: true, force: true });
  });

  it("fits Lambda's 10 GB for an image, counted from the Debian packages' installed sizes", () => {
    const content = dataImageContent(
      dockerPins.map(([name]) => name),
      statSync(process.execPath).size,
      statSync(join(context, dataRuntimeFile)).size,
    );
    console.log(
      `data sandbox image content, upper bound: ${(content.total / 2 ** 20).toFixed(0)} MiB (Debian base ${(content.base / 2 ** 20).toFixed(0)} MiB, ${content.packages.length} packages ${(content.packagesBytes / 2 ** 20).toFixed(0)} MiB, node ${(content.node / 2 ** 20).toFixed(0)} MiB, runner ${(content.runner / 1024).toFixed(0)} KiB)`,
    );
    expect(content.packages).toEqual(expect.arrayContaining(dockerPins.map(([name]) => name)));
    expect(content.total).toBeGreaterThan(300 * 2 ** 20);
    expect(content.total).toBeLessThan(LAMBDA_IMAGE_BYTES);
  });

  it("runs the bundled runner, as the image's entry, for one pandas run with a chart", async () => {
    const exchange = await fake.invokeOnce(
      [process.execPath, join(context, dataRuntimeFile)],
      {
        v: 1,
        language: "python",
        code: [
          "import pandas as pd, matplotlib.pyplot as plt",
          "df = pd.DataFrame({'a': ['x', 'y', 'x'], 'b': [1, 2, 3]})",
          "df.groupby('a')['b'].mean().plot(kind='bar')",
          "plt.savefig('chart.png')",
          "df.groupby('a')['b'].sum().to_dict()",
        ].join("\n"),
      },
      64_301,
    );
    expect(
      exchange.posted.map((p) => p.path),
      exchange.stderr,
    ).toEqual([`/2018-06-01/runtime/invocation/${FAKE_REQUEST_ID}/response`]);
    const answer = exchange.posted[0]?.body as SandboxResponse;
    expect(answer.error).toBeNull();
    expect(answer.result).toEqual({ x: 4, y: 2 });
    const chart = answer.files.find((f) => f.path === "chart.png");
    expect(
      Buffer.from(chart?.content ?? "", "base64")
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
    expect(exchange.nextCalls).toBe(1);
    expect(exchange.exitCode).toBe(0);
  });
});

// Fails clearly where dpkg is missing: the data engine's packages come from Debian.
execFileSync("dpkg-query", ["--version"], { stdio: "ignore" });

/**
 * Makes sure `.sst/platform` exists and belongs to the pinned `sst`: it holds
 * SST's component sources and types, which the infra type-check
 * (`tsconfig.infra.json`) and the resource-graph test (`test/infra`) load.
 * `.sst/` is git-ignored, so a fresh clone has none; this runs `sst install`
 * then, and only then (about a minute, from the npm registry alone).
 *
 * Every `sst` command first downloads Pulumi from the internet unless told not
 * to; `sst install` does not need Pulumi, so the check is skipped.
 *
 * Usage: `npm run infra:prepare`
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const platform = join(root, ".sst", "platform");

const wanted = (
  JSON.parse(readFileSync(join(root, "node_modules", "sst", "package.json"), "utf8")) as {
    version: string;
  }
).version;

const ready =
  existsSync(join(platform, "src", "components", "index.ts")) &&
  existsSync(join(platform, "node_modules", "@pulumi", "aws", "package.json")) &&
  existsSync(join(platform, "version")) &&
  readFileSync(join(platform, "version"), "utf8").trim() === wanted;

if (ready) {
  console.log(`.sst/platform is ready (sst ${wanted})`);
} else {
  console.log(`.sst/platform is missing or stale: running sst install (sst ${wanted})...`);
  const result = spawnSync(
    join(root, "node_modules", ".bin", "sst"),
    ["install", "--stage", "ci"],
    {
      cwd: root,
      stdio: "inherit",
      env: {
        ...process.env,
        SST_SKIP_DEPENDENCY_CHECK: "true",
        SST_TELEMETRY_DISABLED: "1",
        SST_NO_BUN: "true",
      },
    },
  );
  if (result.status !== 0) {
    console.error(
      `sst install failed (${result.error?.message ?? `exit code ${result.status}`}). It installs the AWS provider's npm packages into .sst/platform and needs the npm registry: check that \`npm view @pulumi/aws version\` works, then run \`npm run infra:prepare\` again.`,
    );
    process.exit(1);
  }
}

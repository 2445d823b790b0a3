/**
 * What the data sandbox's image holds, counted from this machine's Debian
 * packages (the same Debian 12 packages the Dockerfile installs): the closure
 * of its packages over Depends, Pre-Depends and Recommends (apt installs
 * recommended packages, as the Dockerfile lets it), the packages of priority
 * `required` (what a Debian slim base is made of), Node and the runner. Each
 * package's `Installed-Size` is dpkg's own count of its files. It is an upper
 * bound: an alternative (`a | b`) counts the first one installed here, which on
 * a developer's machine may be a larger package than apt would pick in the
 * image.
 */
import { execFileSync } from "node:child_process";

/** Lambda's limit for a container image, uncompressed (10 GB). */
export const LAMBDA_IMAGE_BYTES = 10 * 1024 ** 3;

interface Installed {
  sizeKiB: number;
  priority: string;
  relations: string[][];
}

function installedPackages(): Map<string, Installed> {
  const out = execFileSync(
    "dpkg-query",
    [
      "-W",
      "-f=${Package}\\t${db:Status-Abbrev}\\t${Installed-Size}\\t${Priority}\\t${Depends}, ${Pre-Depends}, ${Recommends}\\t${Provides}\\n",
    ],
    { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  const installed = new Map<string, Installed>();
  const provided = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [name, status, size, priority, relations, provides] = line.split("\t");
    if (!name || !status?.startsWith("ii")) continue;
    installed.set(name, {
      sizeKiB: Number(size) || 0,
      priority: priority ?? "",
      relations: (relations ?? "")
        .split(",")
        .map((alt) =>
          alt
            .split("|")
            .map(
              (choice) =>
                choice
                  .trim()
                  .replace(/\s*\(.*\)$/, "")
                  .split(":")[0] ?? "",
            )
            .filter(Boolean),
        )
        .filter((alts) => alts.length > 0),
    });
    for (const virtual of (provides ?? "").split(",")) {
      const v = virtual.trim().replace(/\s*\(.*\)$/, "");
      if (v && !provided.has(v)) provided.set(v, name);
    }
  }
  // A virtual package resolves to the first installed package that provides it.
  for (const [virtual, by] of provided) {
    if (!installed.has(virtual)) {
      const real = installed.get(by);
      if (real) installed.set(virtual, { sizeKiB: 0, priority: "", relations: [[by]] });
    }
  }
  return installed;
}

export interface ImageContent {
  packages: string[];
  packagesBytes: number;
  base: number;
  node: number;
  runner: number;
  total: number;
}

/** The image's content in bytes, for the Dockerfile's packages, the Node binary's and the runner's sizes. */
export function dataImageContent(
  roots: string[],
  nodeBytes: number,
  runnerBytes: number,
): ImageContent {
  const installed = installedPackages();
  const missing = roots.filter((name) => !installed.has(name));
  if (missing.length > 0) {
    throw new Error(
      `the data engine's packages are not installed here (${missing.join(", ")}): run scripts/setup-system.sh`,
    );
  }
  const seen = new Set<string>();
  const todo = [...roots];
  while (todo.length > 0) {
    const name = todo.pop() as string;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const alternatives of installed.get(name)?.relations ?? []) {
      const choice = alternatives.find((alt) => installed.has(alt));
      if (choice) todo.push(choice);
    }
  }
  let base = 0;
  for (const [name, pkg] of installed) {
    if (pkg.priority === "required" && !seen.has(name)) base += pkg.sizeKiB * 1024;
  }
  const packagesBytes = [...seen].reduce(
    (sum, name) => sum + (installed.get(name)?.sizeKiB ?? 0) * 1024,
    0,
  );
  return {
    packages: [...seen].filter(
      (name) => (installed.get(name)?.sizeKiB ?? 0) > 0 || roots.includes(name),
    ),
    packagesBytes,
    base,
    node: nodeBytes,
    runner: runnerBytes,
    total: base + packagesBytes + nodeBytes + runnerBytes,
  };
}

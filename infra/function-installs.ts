/**
 * Installs the packages a function carries beside its bundle, for the
 * function's own architecture, as SST's `nodejs.install` does: a package.json
 * that lists each package at the version in the project's node_modules, then
 * `npm install --os=linux --cpu=<arch> --libc=glibc` (the flags SST 4.17.1's
 * CLI passes), so that npm picks the native packages of Lambda's platform, not
 * this machine's. Used by the knowledge function's build (infra/knowledge.ts),
 * and by the package check (`npm run bundle`, test/infra/function-packages.test.ts),
 * so that what is checked is what is deployed.
 *
 * Installs are cached under `.stackvm/installs/` (git-ignored), one folder per
 * manifest and flags: a warm machine installs nothing; a fresh clone fetches
 * from the npm registry once.
 *
 * A plain module, without SST's globals, so that scripts and tests can import it.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/** Lambda's architectures, as SST names them. */
export type Architecture = "arm64" | "x86_64";

/** npm's name of an architecture (`--cpu`). */
export const npmCpu = (arch: Architecture): "arm64" | "x64" => (arch === "arm64" ? "arm64" : "x64");

/** What to install beside a function's bundle. */
export interface InstallSpec {
  /** Packages, at the version the project's node_modules holds. */
  packages: string[];
  /**
   * Optional dependencies are left out (`--omit=optional`); the native packages
   * wanted are listed in `native` instead. LanceDB's optional dependencies
   * include a 300 MB embeddings runtime (@huggingface/transformers with
   * onnxruntime) that would take the package over Lambda's 250 MB.
   */
  omitOptional?: boolean;
  /** Native packages to add, each as `[package, native package]`, at the version the package asks for. */
  native?: [string, string][];
}

const versionIn = (root: string, name: string): string => {
  const file = join(root, "node_modules", name, "package.json");
  if (!existsSync(file)) {
    throw new Error(`${name} is not installed in ${root}/node_modules: run npm ci`);
  }
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
};

/** The package.json of an install: each package pinned to the project's version. */
export function installManifest(root: string, spec: InstallSpec) {
  const dependencies: Record<string, string> = {};
  for (const name of spec.packages) dependencies[name] = versionIn(root, name);
  for (const [owner, native] of spec.native ?? []) {
    const manifest = JSON.parse(
      readFileSync(join(root, "node_modules", owner, "package.json"), "utf8"),
    ) as { optionalDependencies?: Record<string, string> };
    const version = manifest.optionalDependencies?.[native];
    if (version === undefined) throw new Error(`${owner} names no native package ${native}`);
    dependencies[native] = version;
  }
  return { name: "stackvm-function-install", private: true, dependencies };
}

/** npm's arguments for an install for Lambda on `arch`. */
export function installArguments(arch: Architecture, spec: InstallSpec): string[] {
  return [
    "install",
    "--os=linux",
    `--cpu=${npmCpu(arch)}`,
    "--libc=glibc",
    "--omit=dev",
    ...(spec.omitOptional ? ["--omit=optional"] : []),
    "--no-package-lock",
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
  ];
}

/**
 * The folder whose `node_modules` holds the install, installing it first if it
 * is not cached. Throws with npm's reason when npm cannot (a native package the
 * registry does not have for this architecture, say).
 */
export async function cachedInstall(
  root: string,
  arch: Architecture,
  spec: InstallSpec,
): Promise<string> {
  const manifest = installManifest(root, spec);
  const args = installArguments(arch, spec);
  const key = createHash("sha256")
    .update(JSON.stringify({ manifest, args }))
    .digest("hex")
    .slice(0, 16);
  const dir = join(root, ".stackvm", "installs", `${arch}-${key}`);
  const done = join(dir, "node_modules", ".complete");
  if (existsSync(done)) return dir;
  // One install at a time (the infra tests build the app in several processes at once).
  await mkdir(dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  for (const started = Date.now(); ; ) {
    try {
      await mkdir(lock);
      break;
    } catch {
      if (existsSync(done)) return dir;
      // A lock older than an install can take is a killed process's: take it over.
      if (Date.now() - started > 600_000) {
        await rm(lock, { recursive: true, force: true });
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  try {
    if (!existsSync(done)) await install(dir, manifest, args, arch);
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
  return dir;
}

async function install(
  dir: string,
  manifest: ReturnType<typeof installManifest>,
  args: string[],
  arch: Architecture,
): Promise<void> {
  const work = `${dir}.${process.pid}.tmp`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  await writeFile(join(work, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const npm = spawnSync("npm", args, { cwd: work, encoding: "utf8", timeout: 600_000 });
  if (npm.status !== 0) {
    await rm(work, { recursive: true, force: true });
    const reason = (npm.stderr || npm.error?.message || "no output").trim().split("\n").slice(0, 4);
    throw new Error(
      `npm could not install ${Object.keys(manifest.dependencies).join(", ")} for linux-${npmCpu(arch)}: ${reason.join(" ")}`,
    );
  }
  await writeFile(join(work, "node_modules", ".complete"), "");
  await rm(dir, { recursive: true, force: true });
  await rename(work, dir);
}

/**
 * Puts the install's `node_modules` into `dir` (a function's build output),
 * hard-linked where the file system allows, copied where not.
 */
export async function placeInstall(installDir: string, dir: string): Promise<void> {
  const from = join(installDir, "node_modules");
  const to = join(dir, "node_modules");
  await rm(to, { recursive: true, force: true });
  const linked = spawnSync("cp", ["-al", from, to]);
  if (linked.status !== 0) await cp(from, to, { recursive: true });
}

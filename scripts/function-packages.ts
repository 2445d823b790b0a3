/**
 * Builds each function's deployed package as SST builds it (scripts/bundles.ts:
 * the bundle with code splitting, then what the function installs beside it
 * for its own architecture, infra/function-installs.ts) into a folder of its
 * own, and measures it against Lambda's limits:
 * 250 MB unzipped, and 50 MB zipped for a direct upload.
 *
 * SST 4.17.1 uploads each function's zip to its asset bucket and creates the
 * function from S3 (`s3.BucketObjectv2` in its Function component), where the
 * 50 MB limit does not apply, only the 250 MB unzipped one; the knowledge
 * function's zip (LanceDB's native module alone deflates to about 70 MB) is
 * over 50 MB and deploys through S3 for that reason. Every other function is
 * held to 50 MB as well, so that a direct upload of it would work.
 *
 * Shared by `npm run bundle` (scripts/bundle-size.ts) and the package test
 * (test/infra/function-packages.test.ts).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, open, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { deflateRawSync } from "node:zlib";
import { cachedInstall, placeInstall } from "../infra/function-installs";
import { type Bundle, bundle, type FunctionEntry } from "./bundles";

const root = join(import.meta.dirname, "..");

/**
 * Where packages are assembled: outside the project, so that a package that
 * lacks an install cannot resolve it from the project's node_modules, as Node
 * would by walking up from `.stackvm/`. Rebuilt on every run; the installs in
 * it are hard links into the cache (`.stackvm/installs/`).
 */
export const packagesDir = join(
  tmpdir(),
  `stackvm-packages-${createHash("sha256").update(root).digest("hex").slice(0, 8)}`,
);

/** Lambda's limit on a function's code and layers, unzipped: 250 MB (262,144,000 bytes, as its error says). */
export const UNZIPPED_LIMIT_BYTES = 262_144_000;
/** Lambda's limit on a zip uploaded directly (not from S3): 50 MB. */
export const ZIP_LIMIT_BYTES = 50 * 1024 * 1024;

export interface FunctionPackage {
  name: string;
  arch: FunctionEntry["arch"];
  /** The package's folder: the bundle, and `node_modules` when it installs packages. */
  dir: string;
  /** The bundle as measured for the cold start. */
  bundle: Bundle;
  /** Bytes of the bundle's files (its chunks and the scripts a postbuild hook adds). */
  bundleBytes: number;
  /** Bytes of the installed packages. */
  installBytes: number;
  unzippedBytes: number;
  /** The zip SST would upload: every file deflated, with zip's headers. */
  zipBytes: number;
  /** Whether the function is held to the direct-upload zip limit (see the file's comment). */
  zipLimited: boolean;
}

interface Sizes {
  files: number;
  bytes: number;
  zipBytes: number;
}

/** Sizes of the files under `dir` (skipping `skip`), each deflated as a zip entry. */
async function sizesOf(dir: string, skip?: string): Promise<Sizes> {
  const sizes: Sizes = { files: 0, bytes: 0, zipBytes: 22 };
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const name = relative(dir, path);
    if (skip && (name === skip || name.startsWith(`${skip}/`))) continue;
    const data = await readFile(path);
    sizes.files++;
    sizes.bytes += data.length;
    // A local header and a central directory entry per file, each with the name.
    sizes.zipBytes += deflateRawSync(data).length + 30 + 46 + 2 * Buffer.byteLength(name);
  }
  return sizes;
}

/** The sizes of an install, measured once and kept beside it (an install never changes). */
async function installSizes(installDir: string): Promise<Sizes> {
  const file = join(installDir, "sizes.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as Sizes;
  const measured = await sizesOf(installDir, "package.json");
  // The zip's own end record is counted once, with the bundle's.
  const sizes = { ...measured, zipBytes: measured.zipBytes - 22 };
  await writeFile(file, JSON.stringify(sizes));
  return sizes;
}

/** Builds one function's package into `packagesDir/<name>/` (or `dir`). */
export async function buildPackage(
  entry: FunctionEntry,
  dir = join(packagesDir, entry.name),
): Promise<FunctionPackage> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const built = await bundle(
    entry.name,
    { entryPoints: [join(root, entry.file)] },
    entry.external,
    dir,
  );
  await entry.postbuild?.(dir, root);
  const bundleSizes = await sizesOf(dir, "node_modules");
  let install: Sizes = { files: 0, bytes: 0, zipBytes: 0 };
  if (entry.install) {
    const installDir = await cachedInstall(root, entry.arch, entry.install);
    await placeInstall(installDir, dir);
    install = await installSizes(installDir);
  }
  return {
    name: entry.name,
    arch: entry.arch,
    dir,
    bundle: built,
    bundleBytes: bundleSizes.bytes,
    installBytes: install.bytes,
    unzippedBytes: bundleSizes.bytes + install.bytes,
    zipBytes: bundleSizes.zipBytes + install.zipBytes,
    zipLimited: entry.s3UploadOnly !== true,
  };
}

/** What Lambda would refuse of a package, in words; empty when it fits. */
export function packageProblems(
  pkg: Pick<FunctionPackage, "name" | "unzippedBytes" | "zipBytes" | "zipLimited">,
  limits = { unzipped: UNZIPPED_LIMIT_BYTES, zip: ZIP_LIMIT_BYTES },
): string[] {
  const problems: string[] = [];
  if (pkg.unzippedBytes > limits.unzipped) {
    problems.push(
      `${pkg.name}: ${mb(pkg.unzippedBytes)} unzipped, over Lambda's ${mb(limits.unzipped)}: install less beside the bundle (infra/*.ts nodejs.install)`,
    );
  }
  if (pkg.zipLimited && pkg.zipBytes > limits.zip) {
    problems.push(
      `${pkg.name}: its zip is ${mb(pkg.zipBytes)}, over the ${mb(limits.zip)} of a direct upload`,
    );
  }
  return problems;
}

/** Megabytes as Lambda counts them: its 250 MB are 262,144,000 bytes, 250 x 1024 x 1024. */
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** ELF's machine numbers of the architectures Lambda runs. */
const MACHINES: Record<number, FunctionEntry["arch"]> = { 62: "x86_64", 183: "arm64" };

/**
 * The architecture a native module was built for, from its ELF header
 * (`e_machine`, at byte 18): how a package for arm64 is checked on an x86
 * machine, which cannot load it. Throws for a file that is not a 64-bit
 * little-endian ELF object.
 */
export async function elfArchitecture(
  file: string,
): Promise<FunctionEntry["arch"] | `machine ${number}`> {
  const handle = await open(file, "r");
  try {
    const header = Buffer.alloc(20);
    const { bytesRead } = await handle.read(header, 0, 20, 0);
    if (bytesRead < 20 || header.readUInt32BE(0) !== 0x7f454c46) {
      throw new Error(`${file} is not an ELF object`);
    }
    if (header[4] !== 2 || header[5] !== 1) {
      throw new Error(`${file} is not a 64-bit little-endian ELF object`);
    }
    const machine = header.readUInt16LE(18);
    return MACHINES[machine] ?? `machine ${machine}`;
  } finally {
    await handle.close();
  }
}

/** The native modules (`.node` files) of a package, relative to its folder. */
export async function nativeModules(dir: string): Promise<string[]> {
  if (!existsSync(join(dir, "node_modules"))) return [];
  const found: string[] = [];
  for (const entry of await readdir(join(dir, "node_modules"), {
    recursive: true,
    withFileTypes: true,
  })) {
    if (entry.isFile() && entry.name.endsWith(".node")) {
      found.push(relative(dir, join(entry.parentPath, entry.name)));
    }
  }
  return found.sort();
}

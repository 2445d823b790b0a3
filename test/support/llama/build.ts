/**
 * Builds llama.cpp's `llama-server` for the tests, from the source the npm package
 * `node-llama-cpp` carries (`llama/gitRelease.bundle`, a git bundle of the llama.cpp
 * release it was made with), taken out of its registry tarball (`npm pack`, checked
 * against a pinned integrity): nothing else is fetched. CPU only, only the
 * `llama-server` target, into `.stackvm/llama/<node-llama-cpp version>/` (ignored by
 * git), and skipped when the binary is already there. On two cores the build takes
 * some minutes; `docs/testing.md` says how long and how to rebuild.
 *
 * Several processes may ask at once (`pretest` and a test file run on its own): a
 * lock directory makes one build and the others wait for it.
 *
 * @example
 * const { server } = await ensureLlamaServer(); // path of the llama-server binary
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { copyFile, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/**
 * The npm package whose tarball carries the llama.cpp source, pinned with the
 * registry's integrity: only its git bundle is taken (`npm pack`, then one file
 * out of the tarball), so `npm ci` installs none of its 670 MB of prebuilt
 * binaries, which the tests never run.
 */
export const LLAMA_SOURCE = {
  name: "node-llama-cpp",
  version: "3.22.1",
  integrity:
    "sha512-bltIipuWmc123H7tMIgDGKSsSrhmhlQYeVUC48XTjVW7XGJJiJJyCdlTMzQ/LiWoPkGDpcL4FviDpgw7qfTiDw==",
} as const;

/** The cache folder of this node-llama-cpp version: source, build tree, binary, model. */
export function llamaCacheDir(): string {
  return join(root, ".stackvm", "llama", LLAMA_SOURCE.version);
}

/** The path of the built `llama-server` (it may not exist yet). */
export function llamaServerPath(): string {
  return join(llamaCacheDir(), "bin", "llama-server");
}

/** Options for {@link ensureLlamaServer}. */
export interface BuildOptions {
  /** Where progress lines go (default: stderr). */
  log?: (line: string) => void;
}

/**
 * Returns the path of `llama-server`, building it first when it is not cached.
 * `built` says whether this call built it, `seconds` how long the build took.
 */
export async function ensureLlamaServer(
  options: BuildOptions = {},
): Promise<{ server: string; built: boolean; seconds: number }> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const server = llamaServerPath();
  if (existsSync(server)) return { server, built: false, seconds: 0 };
  const cache = llamaCacheDir();
  await mkdir(cache, { recursive: true });
  const release = await acquireLock(join(cache, ".build.lock"), log);
  try {
    // Another process may have finished the build while this one waited.
    if (existsSync(server)) return { server, built: false, seconds: 0 };
    const started = Date.now();
    await build(cache, log);
    const seconds = Math.round((Date.now() - started) / 1000);
    log(`llama-server: built in ${seconds} s (${server})`);
    return { server, built: true, seconds };
  } finally {
    await release();
  }
}

async function build(cache: string, log: (line: string) => void): Promise<void> {
  const { name, version } = LLAMA_SOURCE;
  const src = join(cache, "src");
  const out = join(cache, "build");
  const logFile = join(cache, "build.log");
  await writeFile(logFile, "");
  log(
    `llama-server: building llama.cpp from ${name}@${version}'s source, CPU only; takes minutes on a few cores (log: ${logFile})`,
  );
  if (!existsSync(join(src, "CMakeLists.txt"))) {
    const bundle = await sourceBundle(cache, logFile);
    await rm(src, { recursive: true, force: true });
    await run("git", ["clone", "--quiet", bundle, src], logFile);
  }
  await run(
    "cmake",
    [
      "-S",
      src,
      "-B",
      out,
      ...(await hasNinja()),
      "-DCMAKE_BUILD_TYPE=Release",
      "-DBUILD_SHARED_LIBS=OFF",
      // CPU only, whatever the machine has: the tests need no accelerator.
      "-DGGML_CUDA=OFF",
      "-DGGML_VULKAN=OFF",
      "-DGGML_METAL=OFF",
      "-DGGML_OPENMP=OFF",
      // The server and what it needs, nothing else.
      "-DLLAMA_BUILD_TESTS=OFF",
      "-DLLAMA_BUILD_EXAMPLES=OFF",
      "-DLLAMA_BUILD_TOOLS=ON",
      "-DLLAMA_BUILD_SERVER=ON",
      // Off, because on it downloads the web UI from Hugging Face at build time;
      // the tests use the HTTP API only.
      "-DLLAMA_USE_PREBUILT_UI=OFF",
      "-DLLAMA_BUILD_UI=OFF",
      // Loopback HTTP needs no TLS, and this avoids a libssl-dev dependency.
      "-DLLAMA_OPENSSL=OFF",
    ],
    logFile,
  );
  await run(
    "cmake",
    ["--build", out, "--target", "llama-server", "--parallel", String(availableParallelism())],
    logFile,
  );
  const bin = join(cache, "bin");
  await mkdir(bin, { recursive: true });
  // Copied under another name and renamed, so a binary at the final path is whole.
  const partial = join(bin, "llama-server.partial");
  await copyFile(join(out, "bin", "llama-server"), partial);
  await rename(partial, join(bin, "llama-server"));
}

/**
 * The git bundle of llama.cpp out of the pinned package's tarball, fetched from
 * the npm registry (`npm pack`, as `npm ci` fetches any package) and checked
 * against the pinned integrity before a byte of it is used.
 */
export async function sourceBundle(cache: string, logFile: string): Promise<string> {
  const bundle = join(cache, "gitRelease.bundle");
  if (existsSync(bundle)) return bundle;
  const { name, version, integrity } = LLAMA_SOURCE;
  const pack = join(cache, "pack");
  await rm(pack, { recursive: true, force: true });
  await mkdir(pack, { recursive: true });
  await run(
    "npm",
    ["pack", `${name}@${version}`, "--pack-destination", pack, "--silent", "--ignore-scripts"],
    logFile,
  );
  const tarball = join(pack, `${name}-${version}.tgz`);
  const sum = `sha512-${createHash("sha512")
    .update(await readFile(tarball))
    .digest("base64")}`;
  if (sum !== integrity) {
    throw new Error(
      `llama_source_integrity: ${tarball} has ${sum}, not the pinned ${integrity}; delete ${pack} and run again`,
    );
  }
  await run("tar", ["-xzf", tarball, "-C", pack, "package/llama/gitRelease.bundle"], logFile);
  await rename(join(pack, "package", "llama", "gitRelease.bundle"), bundle);
  await rm(pack, { recursive: true, force: true });
  return bundle;
}

/** `-G Ninja` when ninja is on PATH (faster), else cmake's default generator. */
async function hasNinja(): Promise<string[]> {
  try {
    await run("ninja", ["--version"], undefined);
    return ["-G", "Ninja"];
  } catch {
    return [];
  }
}

/** Runs a command, appending its output to `logFile`; rejects with the log's tail. */
function run(command: string, args: string[], logFile: string | undefined): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    const sink = logFile ? createWriteStream(logFile, { flags: "a" }) : undefined;
    sink?.write(`$ ${command} ${args.join(" ")}\n`);
    let tail = "";
    const keep = (chunk: Buffer) => {
      sink?.write(chunk);
      tail = (tail + chunk.toString()).slice(-4000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (error) => {
      sink?.end();
      fail(new Error(`llama_build_failed: could not run ${command}: ${error.message}`));
    });
    child.on("close", (code) => {
      sink?.end();
      if (code === 0) done();
      else
        fail(
          new Error(
            `llama_build_failed: \`${command} ${args.slice(0, 2).join(" ")}\` exited ${code}; the end of its output:\n${tail}`,
          ),
        );
    });
  });
}

/**
 * A lock directory (mkdir is atomic) holding the owner's pid. A lock whose owner
 * is gone (a build killed half way) is taken over; the build then starts again in
 * the same build tree, where cmake redoes only what is missing.
 */
async function acquireLock(
  path: string,
  log: (line: string) => void,
): Promise<() => Promise<void>> {
  let announced = false;
  for (;;) {
    try {
      await mkdir(path);
      await writeFile(join(path, "pid"), String(process.pid));
      return () => rm(path, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = Number(await readFile(join(path, "pid"), "utf8").catch(() => "0"));
    if (owner && !alive(owner)) {
      await rm(path, { recursive: true, force: true });
      continue;
    }
    if (!owner) {
      // The owner made the directory and has not written its pid yet, or died
      // in between: give it a moment, then judge by the directory's age.
      const age = Date.now() - (await stat(path).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > 30_000) await rm(path, { recursive: true, force: true });
    }
    if (!announced) {
      log(`llama-server: another process (pid ${owner || "?"}) is building it; waiting`);
      announced = true;
    }
    await new Promise((wake) => setTimeout(wake, 1000));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

#!/usr/bin/env node
/**
 * Completes package-lock.json with the platform-specific optional packages that
 * this machine's registry does not serve (it answers 404 for binaries of other
 * platforms, so `npm install` leaves them out, and `npm ci` then refuses the lock
 * as out of sync). Each missing optional dependency gets an entry with the os and
 * cpu read from its name, which `npm ci` skips on any other platform, as it would
 * with a complete lock. Run it after `npm install`: `npm run lock:platforms`.
 */
import { readFileSync, writeFileSync } from "node:fs";

const OS = ["android", "darwin", "linux", "win32", "freebsd", "openbsd", "netbsd", "sunos", "aix"];
const CPU = ["arm64", "x64", "ia32", "arm", "ppc64", "s390x", "riscv64", "loong64", "mips64el"];
const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const packages = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path.startsWith("node_modules/") || path === "" ? "" : `${path}/`;
    const key = `${base}node_modules/${name}`;
    if (packages[key] || packages[`node_modules/${name}`]) continue;
    const parts = name.split("/").pop().split("-");
    const os = parts.find((p) => OS.includes(p));
    const cpu = parts.find((p) => CPU.includes(p));
    if (!os || !cpu) continue;
    packages[`node_modules/${name}`] = {
      version: String(version).replace(/^[\^~]/, ""),
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
      ...(parts.includes("musl") ? { libc: ["musl"] } : {}),
    };
    added++;
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`lock-platforms: ${added} platform package(s) added to package-lock.json\n`);

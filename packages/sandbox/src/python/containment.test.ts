import { spawn } from "node:child_process";
import { openSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:net";
import { hostname, networkInterfaces, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findExecutable } from "../host-tools";
import {
  bubblewrapArgs,
  DEFAULT_SANDBOX_UID,
  INSIDE,
  probeBubblewrap,
  TMP_BYTES,
} from "./containment";
import { processesOf } from "./instance-sweep";
import { childCommand, childFiles, UID_POOL } from "./pyodide-process";

// The OS layer on its own: the code here is full Node inside the same bubblewrap
// boundary a Python child gets, with no permission model and no closed bridge,
// as if generated code had already walked out of Pyodide. Each test is an
// escape the red-team pass made on the first release.
const files = childFiles(
  process.execPath,
  dirname(createRequire(import.meta.url).resolve("pyodide/pyodide.mjs")),
);
const bwrap = findExecutable("bwrap");
const probe = probeBubblewrap(bwrap, files, DEFAULT_SANDBOX_UID);
const SECRET = "containment-secret-5150";
const REPO = join(dirname(files.script), "../../../..");

interface Contained {
  out: string;
  code: number | null;
  pid: number;
}

/** Runs a Node script inside the boundary and answers what it printed. */
function contained(
  script: string,
  options: { extra?: string[]; fd3?: number } = {},
): Promise<Contained> {
  if (!probe.ok) throw new Error(`bubblewrap cannot run here: ${probe.why}`);
  const { bwrap: binary, uid } = probe.how;
  const child = spawn(
    binary,
    [...bubblewrapArgs(files, options.extra), INSIDE.node, "-e", script],
    {
      env: { STACKVM_CONTAINMENT_SECRET: SECRET },
      detached: true,
      stdio: ["ignore", "pipe", "pipe", ...(options.fd3 === undefined ? [] : [options.fd3])],
      ...(uid === null ? {} : { uid, gid: uid }),
    },
  );
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr?.resume();
  return new Promise((resolve) =>
    child.once("close", (code) => resolve({ out, code, pid: child.pid as number })),
  );
}

function json(result: Contained): Record<string, unknown> {
  return JSON.parse(result.out.trim().split("\n").pop() ?? "null");
}

const socketPath = join(tmpdir(), `stackvm-containment-${process.pid}.sock`);
let pathServer: Server;
let abstractServer: Server;
let connections = 0;

beforeAll(async () => {
  const count = () => {
    connections++;
  };
  pathServer = createServer(count);
  abstractServer = createServer(count);
  await new Promise<void>((resolve) => pathServer.listen(socketPath, resolve));
  await new Promise<void>((resolve) =>
    abstractServer.listen(`\0stackvm-containment-${process.pid}`, resolve),
  );
});

afterAll(async () => {
  await new Promise((resolve) => pathServer.close(resolve));
  await new Promise((resolve) => abstractServer.close(resolve));
  rmSync(socketPath, { force: true });
});

describe("the bubblewrap boundary, with full Node inside it", () => {
  it("can be made on this machine (the tests below need it)", () => {
    expect(probe.ok ? "ok" : probe.why).toBe("ok");
  });

  it("runs as an unprivileged user that owns nothing of the stack's, in its own namespaces", async () => {
    const result = json(
      await contained(`
        const os = require("node:os");
        console.log(JSON.stringify({ uid: process.getuid(), host: os.hostname(),
          env: process.env, argv: process.argv, exec: process.execPath, pid: process.pid,
          root: require("node:fs").readdirSync("/").sort() }));`),
    );
    expect(result.uid).toBe(65534);
    expect(result.host).toBe("sandbox");
    expect(result.host).not.toBe(hostname());
    // bwrap sets only PWD (its --chdir); nothing of the host's environment.
    expect(Object.keys(result.env as object)).toEqual(["PWD"]);
    expect(result.exec).toBe("/sandbox/node");
    expect(JSON.stringify(result)).not.toContain(REPO);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    // Only the system folders, its own files, /proc, /dev and /tmp: no /etc, no home, no data.
    for (const name of result.root as string[]) {
      expect(["bin", "dev", "lib", "lib64", "proc", "sandbox", "sbin", "tmp", "usr"]).toContain(
        name,
      );
    }
    if (process.getuid?.() === 0) {
      // Seen from the host: the child's user is the sandbox's, not root.
      expect(probe.ok && probe.how.uid).toBe(DEFAULT_SANDBOX_UID);
    }
  });

  it("inherits no descriptor but the ones it is given", async () => {
    // An open file of the host, as LevelDB's were, without close-on-exec: fd 3 here.
    const file = join(tmpdir(), `stackvm-containment-db-${process.pid}`);
    writeFileSync(file, "database");
    const fd = openSync(file, "r+");
    try {
      const result = json(
        await contained(
          `
          const fs = require("node:fs");
          const open = [];
          for (let fd = 0; fd < 1024; fd++) {
            try { const s = fs.fstatSync(fd); open.push({ fd, file: s.isFile() });
            } catch {}
          }
          let wrote = 0;
          for (const { fd, file } of open) {
            if (!file) continue;
            try { wrote += fs.writeSync(fd, "x"); } catch {}
          }
          console.log(JSON.stringify({ files: open.filter((o) => o.file).map((o) => o.fd), wrote }));`,
          { fd3: fd },
        ),
      );
      // Only the descriptor handed over on purpose; the boundary adds none.
      expect(result.files).toEqual([3]);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it("cannot see or signal any host process", async () => {
    const result = json(
      await contained(`
        const tried = {};
        for (const pid of [${process.pid}, ${process.ppid}]) {
          try { process.kill(pid, 0); tried[pid] = "reached"; } catch (e) { tried[pid] = e.code; }
        }
        let seen = [];
        try { seen = require("node:fs").readdirSync("/proc").filter((n) => /^\\d+$/.test(n)); } catch {}
        console.log(JSON.stringify({ tried, seen }));`),
    );
    // Its own pid namespace: only its own few processes exist there.
    expect((result.seen as string[]).length).toBeLessThanOrEqual(3);
    for (const outcome of Object.values(result.tried as Record<string, string>)) {
      expect(outcome).not.toBe("reached");
    }
    process.kill(process.pid, 0);
  });

  it("cannot reach a host Unix socket, by path or abstract name", async () => {
    const result = json(
      await contained(`
        const net = require("node:net");
        const attempt = (path) => new Promise((resolve) => {
          const s = net.connect(path, () => { s.destroy(); resolve("connected"); });
          s.on("error", (e) => resolve(e.code));
        });
        Promise.all([attempt(${JSON.stringify(socketPath)}), attempt("\\0stackvm-containment-${process.pid}")])
          .then((codes) => console.log(JSON.stringify({ codes })));`),
    );
    expect(result.codes).not.toContain("connected");
    expect(connections).toBe(0);
  });

  it("cannot reach the host over TCP, on its loopback or its other addresses", async () => {
    const tcp = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(0, "0.0.0.0", resolve));
    const port = (tcp.address() as { port: number }).port;
    const addresses = Object.values(networkInterfaces())
      .flat()
      .filter((entry) => entry?.family === "IPv4")
      .map((entry) => entry?.address as string);
    try {
      const result = json(
        await contained(`
          const net = require("node:net");
          const attempt = (host) => new Promise((resolve) => {
            const s = net.connect({ host, port: ${port}, timeout: 2000 }, () => { s.destroy(); resolve("connected"); });
            s.on("timeout", () => { s.destroy(); resolve("timeout"); });
            s.on("error", (e) => resolve(e.code));
          });
          Promise.all(${JSON.stringify(addresses)}.map(attempt)).then((codes) =>
            console.log(JSON.stringify({ codes, interfaces: Object.keys(require("node:os").networkInterfaces()) })));`),
      );
      expect(addresses).toContain("127.0.0.1");
      expect(result.codes).toHaveLength(addresses.length);
      expect(result.codes).not.toContain("connected");
      // Its own network namespace: a loopback of its own at most.
      for (const name of result.interfaces as string[]) expect(name).toBe("lo");
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => tcp.close(resolve));
    }
  });

  it("leaves no process behind: a setsid and a double fork die with the run", async () => {
    const before = await stray();
    await contained(`
      const { spawn } = require("node:child_process");
      spawn("/usr/bin/setsid", ["/usr/bin/sleep", "301"], { detached: true, stdio: "ignore" }).unref();
      spawn("/bin/sh", ["-c", "(/usr/bin/sleep 302 &) ; exit 0"], { stdio: "ignore" });
      setTimeout(() => { console.log("{}"); process.exit(0); }, 300);`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await stray()).toEqual(before);
  });

  it("gets an empty /tmp of its own: nothing of one run is seen by the next", async () => {
    await contained(
      `require("node:fs").writeFileSync("/tmp/left-behind", "x"); console.log("{}");`,
    );
    const result = json(
      await contained(
        `console.log(JSON.stringify({ tmp: require("node:fs").readdirSync("/tmp") }));`,
      ),
    );
    expect(result.tmp).toEqual([]);
  });

  it("cannot fill the host's RAM through its tmpfs mounts (/tmp and /dev)", async () => {
    // Both are tmpfs, outside every rlimit: unbounded, one run took half the
    // host's RAM for each. Writes stop at /tmp's size, and /dev is read-only.
    const result = json(
      await contained(`
        const fs = require("node:fs");
        const chunk = Buffer.alloc(4 << 20, 1);
        const written = {};
        for (const dir of ["/tmp", "/dev", "/dev/shm"]) {
          written[dir] = 0;
          try {
            for (let n = 0; n < 16; n++) { fs.writeFileSync(dir + "/fill" + n, chunk); written[dir] += chunk.length; }
          } catch (e) { written[dir + " error"] = e.code; }
        }
        let devNull = "ok";
        try { fs.writeFileSync("/dev/null", "x"); } catch (e) { devNull = e.code; }
        console.log(JSON.stringify({ written, devNull }));`),
    );
    const written = result.written as Record<string, number | string>;
    expect(written["/tmp"]).toBeLessThanOrEqual(TMP_BYTES);
    expect(written["/tmp error"]).toBe("ENOSPC");
    expect(written["/dev"]).toBe(0);
    expect(written["/dev/shm"]).toBe(0);
    // The devices themselves still work.
    expect(result.devNull).toBe("ok");
  });

  it("learns no host path from /proc (bwrap's command line, mountinfo)", async () => {
    // With /proc mounted, /proc/1/cmdline is bwrap's own, with every --ro-bind
    // source, and /proc/self/mountinfo names each bound file's host path.
    const result = json(
      await contained(`
        const fs = require("node:fs");
        const read = {};
        for (const path of ["/proc/1/cmdline", "/proc/self/mountinfo", "/proc/self/cmdline"]) {
          try { read[path] = fs.readFileSync(path, "utf8"); } catch (e) { read[path] = e.code; }
        }
        console.log(JSON.stringify({ read, root: fs.readdirSync("/") }));`),
    );
    expect(JSON.stringify(result)).not.toContain(REPO);
    expect(result.root).not.toContain("proc");
  });

  it("sees nothing of /usr/local (the machine's own installs and settings)", async () => {
    // Vacuous where the host's /usr/local is empty; here it holds tools and an npmrc.
    const result = json(
      await contained(`
        const fs = require("node:fs");
        let wrote = "no";
        try { fs.writeFileSync("/usr/local/x", "x"); wrote = "yes"; } catch (e) { wrote = e.code; }
        console.log(JSON.stringify({ local: fs.readdirSync("/usr/local"), wrote }));`),
    );
    expect(result.local).toEqual([]);
    expect(result.wrote).not.toBe("yes");
  });

  it("cannot become another user or gain a privilege", async () => {
    const result = json(
      await contained(
        `
        const codes = [];
        for (const step of [() => process.setuid(0), () => process.setgid(0), () => process.setgroups([0])]) {
          try { step(); codes.push("changed"); } catch (e) { codes.push(e.code ?? e.message); }
        }
        const status = require("node:fs").readFileSync("/proc/self/status", "utf8");
        console.log(JSON.stringify({ codes, capEff: /CapEff:\\s+(\\w+)/.exec(status)[1], uid: process.getuid() }));`,
        // The children have no /proc; one is mounted here only to read the capabilities.
        { extra: ["--proc", "/proc"] },
      ),
    );
    expect(result.codes).not.toContain("changed");
    expect(result.capEff).toBe("0000000000000000");
    expect(result.uid).toBe(65534);
  });

  it("cannot write to the root of its view (bwrap's tmpfs, in the host's RAM and outside every rlimit)", async () => {
    const result = json(
      await contained(`
        const fs = require("node:fs");
        const codes = [];
        for (const path of ["/x", "/sandbox/x", "/sandbox/child/x"]) {
          try { fs.writeFileSync(path, "x"); codes.push("wrote"); } catch (e) { codes.push(e.code); }
        }
        try { fs.mkdirSync("/fill"); codes.push("made"); } catch (e) { codes.push(e.code); }
        console.log(JSON.stringify({ codes }));`),
    );
    expect(result.codes).toEqual(["EROFS", "EROFS", "EROFS", "EROFS"]);
  });

  it("cannot write to the files it is shown", async () => {
    const result = json(
      await contained(`
        const fs = require("node:fs");
        const codes = [];
        for (const path of ["/sandbox/node", "/sandbox/pyodide/pyodide.mjs", "/usr/x"]) {
          try { fs.appendFileSync(path, "x"); codes.push("wrote"); } catch (e) { codes.push(e.code); }
        }
        console.log(JSON.stringify({ codes }));`),
    );
    expect(result.codes).not.toContain("wrote");
  });
});

describe("the user ids of children", () => {
  // The kernel counts processes (RLIMIT_NPROC) per user: children sharing one id
  // let a run that fills its process limit starve the next tenant's child, which
  // boots while it runs. Each child gets an id of its own from a pool.
  const launch = {
    node: files.node,
    pyodideDir: files.pyodide,
    prlimit: "/usr/bin/prlimit",
    unshare: null,
    bubblewrap: { bwrap: "/usr/bin/bwrap", uid: DEFAULT_SANDBOX_UID },
  };
  const run = (uidSlot: number) =>
    childCommand(launch, { run: { snapshot: true, dataBytes: 1, cpuSeconds: 1, uidSlot } }).uid;

  it("runs consecutive children as different users, all inside the pool", () => {
    const uids = [1, 2, 3, 4].map(run);
    expect(new Set(uids).size).toBe(4);
    for (const uid of uids) {
      expect(uid).toBeGreaterThanOrEqual(DEFAULT_SANDBOX_UID);
      expect(uid).toBeLessThan(DEFAULT_SANDBOX_UID + UID_POOL);
    }
  });

  it("keeps a non-root stack's own id (null: no switch)", () => {
    const own = childCommand(
      { ...launch, bubblewrap: { bwrap: "/usr/bin/bwrap", uid: null } },
      { run: { snapshot: true, dataBytes: 1, cpuSeconds: 1, uidSlot: 5 } },
    );
    expect(own.uid).toBeNull();
  });
});

/** The sleeps of the tests above that outlived their run, by command line. */
async function stray(): Promise<number[]> {
  const { readFile } = await import("node:fs/promises");
  const uid = probe.ok && probe.how.uid !== null ? probe.how.uid : (process.getuid?.() ?? 0);
  const found: number[] = [];
  for (const pid of await processesOf(uid)) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (/sleep\0(301|302)/.test(cmdline)) found.push(pid);
  }
  return found;
}

/**
 * The red-team pass's escapes, through the whole local stack: a task's
 * `run_code` step, the worker, the local sandbox process and a Python child in
 * bubblewrap, with a data folder on disk (so LevelDB's files are open in the
 * stack's process). Pyodide's bridge is left open here on purpose
 * (`openSandboxBridge`), as if generated code had already reached the child's
 * Node `process`: what must hold is the OS boundary. After each attempt the
 * stack answers and another tenant's Python run completes.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let dataDir: string;
let otherKey: string;
let server: Server;
let connections = 0;
const socketPath = join(tmpdir(), `stackvm-escape-${process.pid}.sock`);
const REPO = join(import.meta.dirname, "../..");

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "stackvm-escape-data-"));
  server = createServer(() => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  t = await startTestStack({
    dataDir,
    openSandboxBridge: true,
    warmPython: true,
    visibilityTimeoutSeconds: 60,
    env: { STACKVM_MAX_PLAN_UPDATES: "0" },
  });
  otherKey = (
    await t.api("POST", "/v1/admin/tenants/bystander/keys", { name: "b" }, { key: ADMIN_KEY })
  ).body.key;
});

afterAll(async () => {
  await t?.stop();
  await new Promise((resolve) => server.close(resolve));
  rmSync(socketPath, { force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

const HOST = "import js\np = js.constructor.constructor('return process')()\n";

async function python(code: string, key?: string) {
  const created = await t.api(
    "POST",
    "/v1/tasks",
    {
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "run_code",
            tool_params: { language: "python", code },
            output_vars: ["out"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${out}" } },
      ],
    },
    key ? { key } : {},
  );
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return t.waitForTask(created.body.task_id, { timeoutMs: 90_000, ...(key ? { key } : {}) });
}

/** The stack still answers, and a bystander tenant's Python run completes. */
async function stackIsWhole(): Promise<void> {
  expect((await t.api("GET", "/healthz", undefined, { key: null })).status).toBe(200);
  const other = await python("6 * 7", otherKey);
  expect(other).toMatchObject({ status: "completed", final_answer: 42 });
}

/** The sandbox host process: a child of this process running sandbox-host.ts. */
function sandboxHostPid(): number {
  // This stack's own host, a descendant of this process: other test files (and
  // other checkouts on the machine) run stacks with sandbox hosts of their own,
  // which end when their stacks stop.
  const parentOf = (pid: string): number | null => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
      return null;
    }
  };
  const descends = (pid: string): boolean => {
    for (let at: number | null = Number(pid), hops = 0; at && hops < 8; hops++) {
      if (at === process.pid) return true;
      at = parentOf(String(at));
    }
    return false;
  };
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = (() => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, "utf8");
      } catch {
        return "";
      }
    })();
    if (cmdline.includes("sandbox-host.ts") && descends(entry)) return Number(entry);
  }
  throw new Error("no sandbox host process");
}

describe("generated code that reached the child's Node process, through the whole stack", () => {
  it("finds no descriptor of the stack's database to write to", async () => {
    const task = await python(
      `${HOST}fs = p.getBuiltinModule('fs')
files = []
wrote = 0
for fd in range(0, 1024):
    try:
        if fs.fstatSync(fd).isFile():
            files.append(fd)
    except Exception:
        pass
for fd in files:
    try:
        wrote += fs.writeSync(fd, 'x')
    except Exception:
        pass
{'files': files, 'wrote': wrote}`,
    );
    expect(task.status, task.error).toBe("completed");
    // fd 3 is the Pyodide snapshot, open read-only; nothing of LevelDB's.
    expect(task.final_answer).toEqual({ files: [3], wrote: 0 });
    await stackIsWhole();
  });

  it("cannot signal the main process, the sandbox host, or another run", async () => {
    const hostPid = sandboxHostPid();
    const task = await python(
      `${HOST}r = {}
for pid in [${process.pid}, ${hostPid}, ${process.ppid}]:
    try:
        p.kill(pid, 'SIGKILL')
        r[str(pid)] = 'killed'
    except Exception as e:
        r[str(pid)] = str(e.code) if hasattr(e, 'code') else 'error'
r`,
    );
    expect(task.status, task.error).toBe("completed");
    expect(Object.values(task.final_answer)).not.toContain("killed");
    expect(() => process.kill(hostPid, 0)).not.toThrow();
    await stackIsWhole();
  });

  it("cannot connect to a Unix socket on the host", async () => {
    const task = await python(
      `${HOST}import time
net = p.getBuiltinModule('net')
s = net.connect(${JSON.stringify(socketPath)})
time.sleep(0.5)
'tried'`,
    );
    expect(["completed", "failed"]).toContain(task.status);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(connections).toBe(0);
    await stackIsWhole();
  });

  it("learns nothing of the host: user, hostname, paths, environment, /etc/hosts", async () => {
    const task = await python(
      `${HOST}os_ = p.getBuiltinModule('os')
info = {'uid': p.getuid(), 'host': os_.hostname(), 'argv': list(p.argv), 'exec': p.execPath,
        'env': p.getBuiltinModule('util').inspect(p.env)}
try:
    info['user'] = os_.userInfo().username
except Exception:
    info['user'] = None
info`,
    );
    expect(task.status, task.error).toBe("completed");
    expect(task.final_answer.uid).toBe(65534);
    expect(task.final_answer.host).toBe("sandbox");
    expect(task.final_answer.host).not.toBe(hostname());
    expect(task.final_answer.user).toBeNull();
    expect(JSON.stringify(task.final_answer)).not.toContain(REPO);
    expect(JSON.stringify(task.final_answer)).not.toContain(dataDir);
    await stackIsWhole();
  });

  it("cannot start a process that outlives the run, nor leave a file for the next", async () => {
    const spawned = await python(
      `${HOST}cp = p.getBuiltinModule('child_process')
cp.execSync('/usr/bin/setsid /usr/bin/sleep 303 &')
'spawned'`,
    );
    expect(spawned.status).toBe("failed");
    expect(spawned.error).toMatch(/restricted|ERR_ACCESS_DENIED|forbids/);
    const wrote = await python(`${HOST}p.getBuiltinModule('fs').writeFileSync('/tmp/left', 'x')`);
    expect(wrote.status).toBe("failed");
    const next = await python("import os\nos.path.exists('/tmp/left')");
    expect(next).toMatchObject({ status: "completed", final_answer: false });
    await stackIsWhole();
  });
});

describe("generated code in the data engine (CPython, native code at hand), through the whole stack", () => {
  // Python that imports numpy runs in the system's CPython: no bridge to close,
  // ctypes for anyone. The same escapes, with real system calls.
  const DATA = "import numpy, os, socket, ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n";

  it("finds no descriptor of the stack's database to write to", async () => {
    const task = await python(
      `${DATA}import stat
files, wrote = [], 0
for fd in range(0, 1024):
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            files.append(fd)
    except OSError:
        pass
for fd in files:
    try:
        wrote += os.write(fd, b'x')
    except OSError:
        pass
{'files': files, 'wrote': wrote}`,
    );
    expect(task.status, task.error).toBe("completed");
    expect(task.final_answer).toEqual({ files: [], wrote: 0 });
    await stackIsWhole();
  });

  it("cannot signal the main process, the sandbox host, or another run", async () => {
    const hostPid = sandboxHostPid();
    const task = await python(
      `${DATA}r = {}
for pid in [${process.pid}, ${hostPid}, ${process.ppid}]:
    r[str(pid)] = [libc.kill(pid, 9), ctypes.get_errno()]
r['all'] = [libc.kill(-1, 0), ctypes.get_errno()]
r`,
    );
    expect(task.status, task.error).toBe("completed");
    for (const [pid, [ret, errno]] of Object.entries(
      task.final_answer as Record<string, number[]>,
    )) {
      if (pid === "all") continue;
      // ESRCH: no such process in its pid namespace.
      expect([pid, ret, errno]).toEqual([pid, -1, 3]);
    }
    expect(() => process.kill(hostPid, 0)).not.toThrow();
    await stackIsWhole();
  });

  it("cannot connect to a Unix socket on the host", async () => {
    const task = await python(
      `${DATA}s = socket.socket(socket.AF_UNIX)
try:
    s.connect(${JSON.stringify(socketPath)})
    r = 'connected'
except OSError as e:
    r = e.errno
r`,
    );
    expect(task.status, task.error).toBe("completed");
    expect(task.final_answer).not.toBe("connected");
    expect(connections).toBe(0);
    await stackIsWhole();
  });

  it("learns nothing of the host: user, hostname, paths, environment, /etc/hosts", async () => {
    const task = await python(
      `${DATA}import sys
info = {'uid': os.getuid(), 'host': socket.gethostname(), 'env': dict(os.environ), 'exe': sys.executable,
        'path': sys.path, 'root': os.listdir('/'), 'etc': os.listdir('/etc')}
for path in ['/etc/hosts', '/etc/passwd', '/proc/1/cmdline', '/proc/self/mountinfo']:
    try:
        info[path] = open(path).read()
    except OSError as e:
        info[path] = e.errno
info`,
    );
    expect(task.status, task.error).toBe("completed");
    expect(task.final_answer.uid).toBe(65534);
    expect(task.final_answer.host).toBe("sandbox");
    expect(task.final_answer.etc).toEqual(["alternatives"]);
    expect(task.final_answer["/etc/hosts"]).toBe(2);
    expect(JSON.stringify(task.final_answer)).not.toContain(REPO);
    expect(JSON.stringify(task.final_answer)).not.toContain(dataDir);
    expect(JSON.stringify(task.final_answer)).not.toContain(hostname());
    await stackIsWhole();
  });

  it("cannot start a process that outlives the run, nor leave a file for the next", async () => {
    const spawned = await python(
      `${DATA}import subprocess
subprocess.Popen(['/usr/bin/setsid', '/usr/bin/sleep', '321'])
subprocess.run(['/bin/sh', '-c', '(/usr/bin/sleep 322 &) ; exit 0'])
open('/tmp/left', 'w').write('x')
'spawned'`,
    );
    expect(spawned).toMatchObject({ status: "completed", final_answer: "spawned" });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const sleeps = readdirSync("/proc").filter((entry) => {
      try {
        return /sleep\0(321|322)/.test(readFileSync(`/proc/${entry}/cmdline`, "utf8"));
      } catch {
        return false;
      }
    });
    expect(sleeps).toEqual([]);
    const next = await python(`${DATA}os.path.exists('/tmp/left')`);
    expect(next).toMatchObject({ status: "completed", final_answer: false });
    await stackIsWhole();
  });
});

describe("generated code with the bridge closed, as the stack runs by default", () => {
  let closed: TestStack;
  beforeAll(async () => {
    closed = await startTestStack({ warmPython: true, env: { STACKVM_MAX_PLAN_UPDATES: "0" } });
  });
  afterAll(async () => {
    await closed?.stop();
  });

  it("cannot reach the host realm from Python", async () => {
    const created = await closed.api("POST", "/v1/tasks", {
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "run_code",
            tool_params: { language: "python", code: HOST },
            output_vars: ["out"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${out}" } },
      ],
    });
    const task = await closed.waitForTask(created.body.task_id, { timeoutMs: 90_000 });
    expect(task.status).toBe("failed");
    expect(task.error).toMatch(/No module named 'js'/);
  });
});

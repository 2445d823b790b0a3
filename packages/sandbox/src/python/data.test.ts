import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { hostname, networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import {
  DEFAULT_SANDBOX_LIMITS,
  type SandboxRequest,
  type SandboxResponse,
} from "@stackvm/core/sandbox-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxRunner } from "../runner";
import { DATA_LIBRARIES, importsDataLibraries } from "./data-libraries";

// The data engine: Python that imports numpy, pandas, matplotlib or openpyxl
// runs in the system's CPython behind bubblewrap and a seccomp filter. CPython
// runs native code and `ctypes` is at hand, so every escape here is tried with
// real system calls: the OS layers must hold on their own.
let runner: SandboxRunner;
const SECRET = "stackvm-data-secret-7331";
const REPO = join(import.meta.dirname, "../../../..");

beforeAll(async () => {
  process.env.STACKVM_SANDBOX_TEST_SECRET = SECRET;
  runner = new SandboxRunner(
    {
      ceiling: { ...DEFAULT_SANDBOX_LIMITS, time_ms: 10_000 },
      network: "namespace",
      allowNetwork: false,
      warmPython: false,
    },
    { log: () => {} },
  );
});

afterAll(async () => {
  delete process.env.STACKVM_SANDBOX_TEST_SECRET;
  await runner.close();
});

/** Runs Python in the data engine: the code starts with an import of numpy, which routes it there. */
function data(code: string, extra: Partial<SandboxRequest> = {}): Promise<SandboxResponse> {
  return runner.handle({ v: 1, language: "python", code: `import numpy\n${code}`, ...extra });
}

const CTYPES = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n";

describe("the data engine: routing and versions", () => {
  it("answers which imports go to the data engine", () => {
    expect(importsDataLibraries("import pandas as pd")).toBe(true);
    expect(importsDataLibraries("import os, numpy.linalg as la")).toBe(true);
    expect(importsDataLibraries("def f():\n    from matplotlib import pyplot")).toBe(true);
    expect(importsDataLibraries("from openpyxl.styles import Font")).toBe(true);
    expect(importsDataLibraries("import json, csv\n# import pandas")).toBe(false);
    expect(importsDataLibraries("x = 'import pandas'")).toBe(false);
    expect(importsDataLibraries("import pandasx")).toBe(false);
  });

  it("runs plain Python in Pyodide and Python that imports a data library in CPython", async () => {
    const plain = await runner.handle({
      v: 1,
      language: "python",
      code: "import sys\nsys.platform",
    });
    expect(plain.result).toBe("emscripten");
    const withData = await data("import sys\nsys.platform");
    expect(withData.error).toBeNull();
    expect(withData.result).toBe("linux");
  });

  it("refuses the data libraries with the reason where there is no bubblewrap boundary (Lambda, or uncontained)", async () => {
    const uncontained = new SandboxRunner(
      {
        ceiling: DEFAULT_SANDBOX_LIMITS,
        network: "namespace",
        allowNetwork: false,
        containment: "none",
        allowUncontained: true,
        warmPython: false,
      },
      { log: () => {} },
    );
    try {
      const answer = await uncontained.handle({ v: 1, language: "python", code: "import pandas" });
      expect(answer.error?.code).toBe("refused");
      expect(answer.error?.message).toMatch(/only behind the bubblewrap boundary/);
      expect(answer.error?.retryable).toBe(false);
    } finally {
      await uncontained.close();
    }
  });

  it("has the pinned versions of the libraries, and setup-system.sh installs exactly them", async () => {
    const answer = await data(
      "import sys, pandas, matplotlib, openpyxl\n{'python': sys.version.split()[0], 'numpy': numpy.__version__, 'pandas': pandas.__version__, 'matplotlib': matplotlib.__version__, 'openpyxl': openpyxl.__version__}",
    );
    expect(answer.error).toBeNull();
    const pinned = Object.fromEntries(
      Object.entries(DATA_LIBRARIES).map(([name, pin]) => [name, pin.version]),
    );
    expect(answer.result).toEqual(pinned);
    const setup = readFileSync(join(REPO, "scripts/setup-system.sh"), "utf8");
    for (const pin of Object.values(DATA_LIBRARIES)) {
      expect(setup).toMatch(new RegExp(`${pin.debian.replace(".", "\\.")}=[^ ]*${pin.version}`));
    }
  });
});

describe("the data engine: results, files and errors", () => {
  it("groups a 50,000-row CSV with pandas and returns a matplotlib chart as a PNG file", async () => {
    const rows = ["a,b", ...Array.from({ length: 50_000 }, (_, i) => `${"xyz"[i % 3]},${i % 10}`)];
    const answer = await data(
      [
        "import pandas as pd",
        "import matplotlib.pyplot as plt",
        "df = pd.read_csv('data.csv')",
        "means = df.groupby('a')['b'].mean()",
        "means.plot(kind='bar')",
        "plt.savefig('chart.png')",
        "{'rows': len(df), 'means': means.round(3).to_dict()}",
      ].join("\n"),
      { files: [{ path: "data.csv", encoding: "utf8", content: rows.join("\n") }] },
    );
    expect(answer.error).toBeNull();
    expect(answer.result).toEqual({ rows: 50_000, means: { x: 4.5, y: 4.5, z: 4.5 } });
    // Only what the code wrote comes back: not the input, not matplotlib's or fontconfig's caches.
    expect(answer.files.map((file) => file.path)).toEqual(["chart.png"]);
    const chart = answer.files[0];
    expect(chart?.encoding).toBe("base64");
    const png = Buffer.from(chart?.content ?? "", "base64");
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    expect(chart?.size).toBe(png.length);
  });

  it("reads an input file larger than the files limit without taking it for an output", async () => {
    // 1.2 MB of CSV against a 1 MiB files limit: a file given by reference and left as it was.
    const rows = ["a,b", ...Array.from({ length: 300_000 }, (_, i) => `${"xyz"[i % 3]},${i % 7}`)];
    const answer = await data("import pandas as pd\nlen(pd.read_csv('big.csv'))", {
      files: [{ path: "big.csv", encoding: "utf8", content: rows.join("\n") }],
      limits: { files_bytes: 1 << 20 },
    });
    expect(answer.error).toBeNull();
    expect(answer.result).toBe(300_000);
    expect(answer.files).toEqual([]);
  });

  it("writes and reads an Excel workbook with openpyxl, and reads it with pandas", async () => {
    const answer = await data(
      [
        "import openpyxl, pandas as pd",
        "book = openpyxl.Workbook()",
        "sheet = book.active",
        "sheet.append(['a', 'b'])",
        "sheet.append(['x', 2])",
        "book.save('out.xlsx')",
        "pd.read_excel('out.xlsx').to_dict(orient='records')",
      ].join("\n"),
    );
    expect(answer.error).toBeNull();
    expect(answer.result).toEqual([{ a: "x", b: 2 }]);
    expect(answer.files.map((file) => [file.path, file.encoding])).toEqual([
      ["out.xlsx", "base64"],
    ]);
  });

  it("turns a DataFrame, an array and numpy numbers into JSON (NaN as null)", async () => {
    const answer = await data(
      "import pandas as pd\nresult = {'df': pd.DataFrame({'a': [1, 2], 'b': [0.5, None]}), 'arr': numpy.arange(3), 'n': numpy.int64(7)}",
    );
    expect(answer.error).toBeNull();
    expect(answer.result).toEqual({
      df: [
        { a: 1, b: 0.5 },
        { a: 2, b: null },
      ],
      arr: [0, 1, 2],
      n: 7,
    });
  });

  it("binds inputs, prints, runs top-level await and keeps only the program's frames", async () => {
    const ok = await data(
      "import asyncio\nawait asyncio.sleep(0)\nprint('n', len(rows))\nsum(rows)",
      {
        inputs: { rows: [1, 2, 3] },
      },
    );
    expect(ok).toMatchObject({ result: 6, stdout: "n 3\n", error: null });
    const failed = await data("def f():\n    raise ValueError('bad input')\nf()");
    expect(failed.error?.code).toBe("runtime_error");
    expect(failed.error?.message).toBe("ValueError: bad input");
    expect(failed.error?.traceback).toContain('File "main.py", line 3, in f');
    expect(failed.error?.traceback).not.toContain("<string>");
    const syntax = await data("1 +");
    expect(syntax.error?.code).toBe("syntax_error");
  });
});

describe("the data engine: limits, each with its own error", () => {
  it("ends an endless loop at the time limit, then runs the next program", async () => {
    const answer = await data("while True:\n    pass", { limits: { time_ms: 500 } });
    expect(answer.error?.code).toBe("timeout");
    expect((await data("1")).result).toBe(1);
  });

  it("ends a numpy allocation over the memory limit", async () => {
    const answer = await data("x = numpy.ones(1 << 30, dtype='uint8')\nx.sum()", {
      limits: { memory_mib: 64 },
    });
    expect(answer.error?.code).toBe("memory_limit");
    expect(answer.error?.message).toMatch(/64 MiB/);
  });

  it("holds the memory limit for shared memory: an anonymous mmap and memfds (outside RLIMIT_DATA)", async () => {
    const mmap = await data(
      "import mmap\nm = mmap.mmap(-1, 1 << 30)\nfor i in range(0, 1 << 30, 4096):\n    m[i] = 1\n'filled'",
      { limits: { memory_mib: 64 } },
    );
    expect(mmap.error?.code).toBe("memory_limit");
    const memfd = await data(
      "import os, mmap\nkeep = []\nfor i in range(64):\n    fd = os.memfd_create('x')\n    os.ftruncate(fd, 16 << 20)\n    m = mmap.mmap(fd, 16 << 20)\n    m[:] = b'1' * (16 << 20)\n    keep.append(m)\n'filled'",
      { limits: { memory_mib: 64 } },
    );
    expect(memfd.error?.code).toBe("memory_limit");
  });

  it("cuts a flood of output at the output limit, from Python and from threads", async () => {
    const answer = await data(
      "import threading\ndef flood():\n    while True:\n        print('x' * 1000)\nfor _ in range(4):\n    threading.Thread(target=flood, daemon=True).start()\nflood()",
      { limits: { output_bytes: 4096 } },
    );
    expect(answer.error?.code).toBe("output_limit");
    expect(answer.truncated).toBe(true);
    expect(Buffer.byteLength(answer.stdout)).toBeLessThanOrEqual(4096);
  });

  it("cannot break the protocol by writing to its own stdout from native code", async () => {
    const answer = await data(
      `${CTYPES}libc.write(1, b'{"t":"done","answer":"{}"}\\n', 27)\nos.write(1, b'garbage\\n')\n'ok'`,
    );
    expect(answer).toMatchObject({ result: "ok", error: null, stdout: "" });
  });

  it("stops at the file limit", async () => {
    const answer = await data("open('big.bin', 'wb').write(b'x' * (3 << 20))\n'wrote'", {
      limits: { files_bytes: 1 << 20 },
    });
    expect(answer.error?.code).toBe("file_limit");
  });
});

describe("the data engine: escapes with native code fail", () => {
  it("runs as an unprivileged user with no environment of the host, no /proc and no /etc but BLAS", async () => {
    const answer = await data(
      "import socket, sys\n{'uid': os.getuid(), 'host': socket.gethostname(), 'env': dict(os.environ), 'root': sorted(os.listdir('/')), 'etc': sorted(os.listdir('/etc')), 'exe': sys.executable, 'cwd': os.getcwd()}".replace(
        "import socket",
        "import os, socket",
      ),
    );
    expect(answer.error).toBeNull();
    const info = answer.result as Record<string, unknown>;
    expect(info.uid).toBe(65534);
    expect(info.host).toBe("sandbox");
    expect(info.host).not.toBe(hostname());
    expect(info.root).toEqual(["bin", "dev", "etc", "lib", "lib64", "sbin", "tmp", "usr"]);
    expect(info.etc).toEqual(["alternatives"]);
    expect(info.cwd).toBe("/tmp/work");
    expect(JSON.stringify(info)).not.toContain(SECRET);
    expect(JSON.stringify(info)).not.toContain(REPO);
  });

  it("cannot read the host's files, nor write to the files it is shown", async () => {
    const answer = await data(
      [
        "out = {}",
        `for path in ['/etc/passwd', '/etc/hosts', '/proc/self/status', ${JSON.stringify(join(REPO, "package.json"))}]:`,
        "    try:",
        "        open(path).read()",
        "        out[path] = 'read'",
        "    except OSError as e:",
        "        out[path] = e.errno",
        "for path in ['/usr/lib/python3/dist-packages/numpy/__init__.py', '/usr/bin/x', '/etc/alternatives/x']:",
        "    try:",
        "        open(path, 'a').write('x')",
        "        out[path] = 'wrote'",
        "    except OSError as e:",
        "        out[path] = e.errno",
        "out",
      ].join("\n"),
    );
    expect(answer.error).toBeNull();
    expect(Object.values(answer.result as object)).not.toContain("read");
    expect(Object.values(answer.result as object)).not.toContain("wrote");
  });

  it("sends back only regular files of the working folder: no link, FIFO or device smuggles a file of the view", async () => {
    const answer = await data(
      [
        "import os",
        "out = {}",
        "os.symlink('/usr/bin/python3', 'python.bin')",
        "os.symlink('/usr/lib', 'lib')",
        "os.mkfifo('pipe')",
        "for name, make in [('hard', lambda: os.link('/usr/bin/python3', 'hard')), ('null', lambda: os.mknod('null', 0o20666, os.makedev(1, 3))), ('shm', lambda: open('/dev/shm/x', 'w'))]:",
        "    try:",
        "        make()",
        "        out[name] = 'made'",
        "    except OSError as e:",
        "        out[name] = e.errno",
        "open('kept.txt', 'w').write('mine')",
        "out",
      ].join("\n"),
    );
    expect(answer.error).toBeNull();
    // A hard link across mounts, a device node and /dev/shm are refused by the kernel.
    expect(answer.result).toEqual({ hard: 18, null: 1, shm: 30 });
    // The links and the FIFO stay behind (a FIFO read would block the answer): only the file comes back.
    expect(answer.files?.map((f) => f.path)).toEqual(["kept.txt"]);
  });

  it("stops a flood of files at the file limit, and a path too deep at the path's length", async () => {
    const many = await data("for i in range(30000):\n    open(f'f{i}', 'w').close()\n'ok'");
    expect(many.error?.code).toBe("file_limit");
    expect(many.files?.length).toBeLessThanOrEqual(DEFAULT_SANDBOX_LIMITS.max_files);
    const deep = await data(
      "import os\np = os.path.join(*['d'] * 200)\nos.makedirs(p)\nopen(os.path.join(p, 'x'), 'w').write('x')\n'ok'",
    );
    expect(deep.error?.code).toBe("file_limit");
    expect(deep.error?.message).toMatch(/200 characters/);
    expect(deep.files).toEqual([]);
  });

  it("is refused the system calls a kernel exploit starts from (seccomp), with EPERM", async () => {
    // x86_64 numbers: ptrace, process_vm_readv, bpf, perf_event_open, userfaultfd,
    // io_uring_setup, keyctl, unshare, setns, mount, chroot.
    const answer = await data(
      `${CTYPES}out = {}
for name, nr in [('ptrace', 101), ('process_vm_readv', 310), ('bpf', 321), ('perf_event_open', 298), ('userfaultfd', 323), ('io_uring_setup', 425), ('keyctl', 250), ('unshare', 272), ('setns', 308), ('mount', 165), ('chroot', 161)]:
    r = libc.syscall(nr, 0, 0, 0, 0, 0)
    out[name] = [r, ctypes.get_errno()]
# clone with CLONE_NEWUSER, and clone3 (which the filter cannot read: ENOSYS)
out['clone_newuser'] = [libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0), ctypes.get_errno()]
out['clone3'] = [libc.syscall(435, 0, 0), ctypes.get_errno()]
out`,
    );
    expect(answer.error).toBeNull();
    const out = answer.result as Record<string, [number, number]>;
    for (const [name, [ret, errno]] of Object.entries(out)) {
      expect([name, ret, errno]).toEqual([name, -1, name === "clone3" ? 38 : 1]);
    }
  });

  it("still runs threads and subprocesses, but none outlives the run", async () => {
    const before = await strays();
    const answer = await data(
      [
        "import subprocess, threading, time",
        "threading.Thread(target=time.sleep, args=(300,)).start()",
        "subprocess.Popen(['/usr/bin/sleep', '311'], start_new_session=True)",
        "subprocess.run(['/bin/sh', '-c', '(/usr/bin/sleep 312 &) ; exit 0'])",
        "pid = os.fork()",
        "if pid == 0:",
        "    os.setsid()",
        "    os.execv('/usr/bin/sleep', ['sleep', '313'])",
        "'spawned'",
      ]
        .join("\n")
        .replace("import subprocess", "import os, subprocess"),
    );
    // A non-daemon thread still sleeping does not hold the answer back.
    expect(answer).toMatchObject({ result: "spawned", error: null });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await strays()).toEqual(before);
  });

  it("cannot starve the next run by filling its process limit (a fork bomb)", async () => {
    const answer = await data(
      "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    result = {'forked': n, 'errno': e.errno}",
    );
    expect(answer.error).toBeNull();
    expect((answer.result as { errno: number }).errno).toBe(11);
    expect((answer.result as { forked: number }).forked).toBeLessThan(256);
    expect((await data("6 * 7")).result).toBe(42);
  });

  it("cannot reach the host over TCP or a Unix socket, nor resolve a name", async () => {
    let connections = 0;
    const tcp: Server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(0, "0.0.0.0", resolve));
    const port = (tcp.address() as { port: number }).port;
    const unixPath = join(tmpdir(), `stackvm-data-${process.pid}.sock`);
    const unix: Server = createServer(() => {
      connections++;
    });
    await new Promise<void>((resolve) => unix.listen(unixPath, resolve));
    const abstract: Server = createServer(() => {
      connections++;
    });
    await new Promise<void>((resolve) => abstract.listen(`\0stackvm-data-${process.pid}`, resolve));
    const addresses = Object.values(networkInterfaces())
      .flat()
      .filter((entry) => entry?.family === "IPv4")
      .map((entry) => entry?.address as string);
    try {
      const answer = await data(
        [
          "import socket",
          "out = []",
          `for host in ${JSON.stringify([...addresses, "169.254.169.254"])}:`,
          "    try:",
          `        socket.create_connection((host, ${port}), timeout=2).close()`,
          "        out.append('connected')",
          "    except OSError as e:",
          "        out.append(e.errno)",
          `for path in [${JSON.stringify(unixPath)}, '\\0stackvm-data-${process.pid}']:`,
          "    s = socket.socket(socket.AF_UNIX)",
          "    try:",
          "        s.connect(path)",
          "        out.append('connected')",
          "    except OSError as e:",
          "        out.append(e.errno)",
          "try:",
          "    socket.getaddrinfo('example.com', 80)",
          "    out.append('resolved')",
          "except OSError as e:",
          "    out.append('no name')",
          "out",
        ].join("\n"),
      );
      expect(answer.error).toBeNull();
      expect(answer.result).not.toContain("connected");
      expect(answer.result).not.toContain("resolved");
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => tcp.close(resolve));
      await new Promise((resolve) => unix.close(resolve));
      await new Promise((resolve) => abstract.close(resolve));
    }
  });

  it("leaves nothing for the next run: not a file, not matplotlib's settings or font cache", async () => {
    const first = await data(
      [
        "import matplotlib, glob",
        "open('/tmp/left-behind', 'w').write('x')",
        "os.makedirs('/tmp/.matplotlib', exist_ok=True)",
        "open('/tmp/.matplotlib/matplotlibrc', 'w').write('lines.linewidth: 42\\n')",
        "for cache in glob.glob('/tmp/.matplotlib/fontlist-*.json'):",
        "    open(cache, 'w').write('{\"poisoned\": true}')",
        "matplotlib.rcParams['lines.linewidth'] = 42",
        "'wrote'",
      ]
        .join("\n")
        .replace("import matplotlib, glob", "import os, matplotlib, glob"),
    );
    expect(first.error).toBeNull();
    const next = await data(
      [
        "import os, glob, json, matplotlib",
        "import matplotlib.pyplot as plt",
        "plt.plot([1, 2]); plt.savefig('c.png')",
        "caches = [json.load(open(f)).get('poisoned', False) for f in glob.glob('/tmp/.matplotlib/fontlist-*.json')]",
        "{'left': os.path.exists('/tmp/left-behind'), 'rc': os.path.exists('/tmp/.matplotlib/matplotlibrc'), 'width': matplotlib.rcParams['lines.linewidth'], 'poisoned': any(caches)}",
      ].join("\n"),
    );
    expect(next.error).toBeNull();
    expect(next.result).toEqual({ left: false, rc: false, width: 1.5, poisoned: false });
  });

  it("crashes only itself with native code (a segfault through ctypes), with a clear error", async () => {
    const answer = await data(`${CTYPES}ctypes.string_at(0)`);
    expect(answer.error?.code).toBe("runtime_error");
    expect(answer.error?.message).toMatch(/crashed/);
    expect((await data("6 * 7")).result).toBe(42);
  });
});

/** The processes, of any user, running the test's sleeps. */
async function strays(): Promise<number[]> {
  const { readdir, readFile } = await import("node:fs/promises");
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (/sleep\0(300|311|312|313)/.test(cmdline)) found.push(Number(entry));
  }
  return found;
}

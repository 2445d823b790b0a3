import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SYSTEM_PYTHON } from "./data-process";
import { seccompProgram } from "./seccomp";
import { SECCOMP_PRELUDE } from "./seccomp-py";

// The filter as the data child installs it where there is no bwrap (the data
// function on Lambda): from fd 3, before anything else runs.
const dir = mkdtempSync(join(tmpdir(), "stackvm-seccomp-py-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the prelude and then `code` in CPython, with `program` on fd 3. */
function run(program: Buffer, code: string) {
  const file = join(dir, `p-${Math.random()}`);
  writeFileSync(file, program);
  const fd = openSync(file, "r");
  try {
    return spawnSync(SYSTEM_PYTHON, ["-I", "-B", "-c", SECCOMP_PRELUDE + code], {
      stdio: ["ignore", "pipe", "pipe", fd],
      encoding: "utf8",
      env: {},
    });
  } finally {
    closeSync(fd);
  }
}

const PROBE = [
  "import ctypes, socket",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "r = libc.syscall(101, 0, 0, 0, 0)",
  "print('ptrace', r, ctypes.get_errno())",
  "try:",
  "    socket.socket(socket.AF_INET, socket.SOCK_STREAM)",
  "    print('inet allowed')",
  "except OSError as error:",
  "    print('inet', error.errno)",
].join("\n");

describe("the data child's own seccomp filter (no bwrap)", () => {
  it("holds once installed: ptrace and, on the data function, internet sockets answer EPERM", () => {
    const strict = run(seccompProgram("x64", { inetSockets: false }) as Buffer, PROBE);
    expect(strict.status, strict.stderr).toBe(0);
    expect(strict.stdout).toBe("ptrace -1 1\ninet 1\n");
    // The local filter (bwrap's network namespace cuts the network) leaves sockets alone.
    const local = run(seccompProgram("x64") as Buffer, PROBE);
    expect(local.stdout).toBe("ptrace -1 1\ninet allowed\n");
  });

  it("refuses to run the program when the filter is malformed, saying why", () => {
    const broken = run(Buffer.from("1234567"), "print('ran')");
    expect(broken.status).toBe(4);
    expect(broken.stdout).toBe("");
    expect(broken.stderr).toMatch(
      /seccomp filter is malformed \(7 bytes on fd 3\); the run is refused/,
    );
  });

  it("refuses to run the program when the kernel will not take the filter", () => {
    // Eight bytes of a jump past the end: a program the kernel's checker rejects.
    const invalid = Buffer.alloc(8);
    invalid.writeUInt16LE(0x05, 0); // BPF_JMP | BPF_JA
    invalid.writeUInt32LE(10, 4);
    const refused = run(invalid, "print('ran')");
    expect(refused.status).toBe(4);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/cannot install its seccomp filter \(errno 22\)/);
  });
});

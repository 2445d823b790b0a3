/**
 * The data engine's seccomp filter, as the classic BPF program bwrap installs
 * (`--seccomp FD`) before it starts CPython. CPython runs native code (numpy,
 * pandas, and `ctypes` for anyone), so what the kernel offers is the attack
 * surface: this takes away the system calls a data program never needs and a
 * kernel exploit often starts from, answering EPERM (the program sees an
 * ordinary error, not a crash):
 *
 * - new namespaces (`unshare`, `setns`, `clone` with a `CLONE_NEW*` flag; `clone3`,
 *   whose flags a filter cannot read, answers ENOSYS so that the C library falls
 *   back to `clone`), mounts and the new mount API, `chroot`, `pivot_root`;
 * - tracing and reading other processes (`ptrace`, `process_vm_readv/writev`),
 *   `perf_event_open`, `bpf`, `userfaultfd`, `io_uring`, the kernel keyring,
 *   file handles (`open_by_handle_at`), modules, `kexec`, swap, `reboot`;
 * - any other ABI than the native one (a 32-bit or x32 system call kills the process);
 * - optionally (`inetSockets: false`, the data function on Lambda) internet
 *   sockets: `socket(AF_INET | AF_INET6, ...)` answers EPERM. On Lambda the
 *   child shares the runner's network, where the Runtime API listens on
 *   loopback; without this a run could answer its own invocation and then
 *   fetch the next one. Behind bubblewrap the empty network namespace does
 *   that job, so the filter leaves sockets alone there.
 *
 * Built for x86_64 (the machines that run the data engine: Debian's packages on
 * the developers' and CI machines); `seccompProgram` answers null elsewhere and
 * the engine says so in its log.
 */

const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;
const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;
/** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
const CLONE_NEW_FLAGS = 0x7e020000;

/** x86_64 numbers of the refused system calls. */
export const REFUSED_SYSCALLS_X86_64: Readonly<Record<string, number>> = {
  ptrace: 101,
  process_vm_readv: 310,
  process_vm_writev: 311,
  perf_event_open: 298,
  bpf: 321,
  userfaultfd: 323,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  keyctl: 250,
  add_key: 248,
  request_key: 249,
  unshare: 272,
  setns: 308,
  mount: 165,
  umount2: 166,
  pivot_root: 155,
  chroot: 161,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  init_module: 175,
  finit_module: 313,
  delete_module: 176,
  kexec_load: 246,
  kexec_file_load: 320,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  acct: 163,
};
const CLONE_X86_64 = 56;
const CLONE3_X86_64 = 435;
const SOCKET_X86_64 = 41;
const AF_INET = 2;
const AF_INET6 = 10;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

type Label = "deny" | "nosys" | "clone" | "socket" | "allow" | "kill";
type Op =
  | { code: number; k: number }
  | { code: number; k: number; jt: Label | 0; jf: Label | 0 }
  | { label: Label };

export interface SeccompOptions {
  /** Whether `socket(AF_INET | AF_INET6)` is allowed (default true). */
  inetSockets?: boolean;
}

/** The filter for this machine's architecture, or null where it is not x86_64. */
export function seccompProgram(
  arch: string = process.arch,
  options: SeccompOptions = {},
): Buffer | null {
  if (arch !== "x64") return null;
  const socketRule: Op[] =
    options.inetSockets === false ? [{ code: JEQ_K, k: SOCKET_X86_64, jt: "socket", jf: 0 }] : [];
  const socketCheck: Op[] =
    options.inetSockets === false
      ? [
          { label: "socket" },
          // The domain is the first argument's low 32 bits.
          { code: LD_W_ABS, k: 16 },
          { code: JEQ_K, k: AF_INET, jt: "deny", jf: 0 },
          { code: JEQ_K, k: AF_INET6, jt: "deny", jf: 0 },
          { code: RET_K, k: SECCOMP_RET_ALLOW },
        ]
      : [];
  const ops: Op[] = [
    { code: LD_W_ABS, k: 4 },
    { code: JEQ_K, k: AUDIT_ARCH_X86_64, jt: 0, jf: "kill" },
    { code: LD_W_ABS, k: 0 },
    { code: JGE_K, k: X32_SYSCALL_BIT, jt: "kill", jf: 0 },
    ...Object.values(REFUSED_SYSCALLS_X86_64).map((nr) => ({
      code: JEQ_K,
      k: nr,
      jt: "deny" as const,
      jf: 0 as const,
    })),
    { code: JEQ_K, k: CLONE3_X86_64, jt: "nosys", jf: 0 },
    { code: JEQ_K, k: CLONE_X86_64, jt: "clone", jf: 0 },
    ...socketRule,
    { label: "allow" },
    { code: RET_K, k: SECCOMP_RET_ALLOW },
    { label: "clone" },
    // The flags are the first argument's low 32 bits (little-endian).
    { code: LD_W_ABS, k: 16 },
    { code: JSET_K, k: CLONE_NEW_FLAGS, jt: "deny", jf: 0 },
    // BPF jumps only forward: a second allow.
    { code: RET_K, k: SECCOMP_RET_ALLOW },
    ...socketCheck,
    { label: "deny" },
    { code: RET_K, k: SECCOMP_RET_ERRNO | EPERM },
    { label: "nosys" },
    { code: RET_K, k: SECCOMP_RET_ERRNO | ENOSYS },
    { label: "kill" },
    { code: RET_K, k: SECCOMP_RET_KILL_PROCESS },
  ];
  return assemble(ops);
}

/** Resolves the labels into jump offsets and writes each `struct sock_filter` (8 bytes). */
function assemble(ops: Op[]): Buffer {
  const at = new Map<string, number>();
  const code: Exclude<Op, { label: Label }>[] = [];
  for (const op of ops) {
    if ("label" in op) at.set(op.label, code.length);
    else code.push(op);
  }
  const out = Buffer.alloc(code.length * 8);
  code.forEach((op, index) => {
    const offset = (target: Label | 0) => {
      if (target === 0) return 0;
      const to = at.get(target);
      if (to === undefined || to <= index || to - index - 1 > 255) {
        throw new Error(`seccomp: the jump to ${target} cannot be encoded`);
      }
      return to - index - 1;
    };
    out.writeUInt16LE(op.code, index * 8);
    out.writeUInt8("jt" in op ? offset(op.jt) : 0, index * 8 + 2);
    out.writeUInt8("jf" in op ? offset(op.jf) : 0, index * 8 + 3);
    out.writeUInt32LE(op.k >>> 0, index * 8 + 4);
  });
  return out;
}

/**
 * The seccomp filter installed by the data child itself, where there is no
 * bubblewrap to install it (the data function on Lambda: no user namespaces in
 * a Lambda instance). This Python text runs first in `python3 -I -B -c`, before
 * the libraries and long before the program: it reads the filter (`seccomp.ts`)
 * from fd 3, sets `no_new_privs` (which lets an unprivileged process install a
 * filter, and which no exec can undo), and installs it with `prctl`. From then
 * on the filter holds for the child and everything it starts; a filter cannot
 * be removed, only added to.
 *
 * If either `prctl` fails, the child writes why and exits before it says
 * `ready`: the run answers `unavailable`, never runs unfiltered.
 */
export const SECCOMP_PRELUDE = String.raw`
def _stackvm_seccomp():
    import ctypes, os, sys
    chunks = []
    while True:
        chunk = os.read(3, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(3)
    program = b"".join(chunks)
    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    libc.prctl.restype = ctypes.c_int
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if len(program) == 0 or len(program) % 8 != 0:
        sys.stderr.write(f"the data engine's seccomp filter is malformed ({len(program)} bytes on fd 3); the run is refused\n")
        os._exit(4)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.stderr.write(f"the data engine cannot set no_new_privs (errno {ctypes.get_errno()}); the run is refused rather than run without its seccomp filter\n")
        os._exit(4)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        sys.stderr.write(f"the data engine cannot install its seccomp filter (errno {ctypes.get_errno()}); the run is refused rather than run without it\n")
        os._exit(4)
_stackvm_seccomp()
del _stackvm_seccomp
`;

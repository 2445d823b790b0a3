/**
 * The data engine's child: CPython (the system's, with Debian's numpy, pandas,
 * matplotlib and openpyxl) run as `python3 -I -B -c DATA_CHILD` inside the
 * bubblewrap boundary. It speaks the Pyodide child's protocol on its stdout
 * (JSON lines: `ready`, `out`/`err` chunks, `done` with the answer), so the
 * engine around both is the same.
 *
 * It boots before any request: the libraries imported and matplotlib's font
 * list built in the child's private `/tmp` (MPLCONFIGDIR), so that a pre-started
 * child is ready the moment a run comes. Nothing here is trusted: the code runs
 * in this same process with `ctypes` at hand, so every limit that matters is the
 * OS's (the boundary, rlimits, the host's deadline) and the host checks every
 * answer again.
 *
 * The protocol keeps the pipe the host reads (a copy of fd 1); fd 1 itself points
 * at /dev/null, so what native code prints cannot break a line of the protocol,
 * and Python's own print() goes through a writer that counts it against the
 * output limit. The working folder's files, the result and the error are
 * `driver-common-py.ts`, shared with the Pyodide driver.
 */
import { DRIVER_COMMON_PY } from "./driver-common-py";

export const DATA_CHILD = String.raw`
import os, sys
# The child's temporary folder: bwrap's private /tmp, or (the data function on
# Lambda, no bwrap) the runner's, given as the first argument.
_TMP = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
WORKDIR = _TMP + "/work"
os.environ.clear()
os.environ.update({
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": _TMP + "/.matplotlib",
    # Debian's default settings, not the host's /etc/matplotlibrc (the child has no /etc).
    "MATPLOTLIBRC": "/usr/share/matplotlib/mpl-data/matplotlibrc",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    # Caches (fontconfig writes one at boot) stay out of the working folder, whose files come back.
    "HOME": _TMP + "/home",
    "XDG_CACHE_HOME": _TMP + "/.cache",
    "TZ": "UTC",
})
_proto = os.dup(1)
_null = os.open("/dev/null", os.O_WRONLY)
os.dup2(_null, 1)
os.close(_null)

import json, threading

_lock = threading.Lock()

def _send(message):
    data = (json.dumps(message) + "\n").encode()
    with _lock:
        view = memoryview(data)
        while view:
            view = view[os.write(_proto, view):]

try:
    import base64, io, traceback, ast, asyncio, inspect, stat
    import numpy, pandas, openpyxl, matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot
except ImportError as error:
    sys.stderr.write(f"the data engine's libraries are missing ({error}); install them with scripts/setup-system.sh (Debian: apt-get install python3-numpy python3-pandas python3-matplotlib python3-openpyxl)\n")
    sys.stderr.flush()
    os._exit(3)
os.makedirs(WORKDIR, exist_ok=True)
os.chdir(WORKDIR)
_send({"t": "ready"})

_line = sys.stdin.buffer.readline()
if not _line:
    os._exit(0)
_message = json.loads(_line)
_request = json.loads(_message["request"])
_left = [_message["outputBytes"]]

class _Writer(io.TextIOBase):
    def __init__(self, stream):
        self._stream = stream
    def writable(self):
        return True
    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        data = text.encode("utf-8", "replace")
        with _lock:
            if len(data) > _left[0]:
                part = data[:_left[0]].decode("utf-8", "ignore")
                _left[0] = 0
                view = memoryview((json.dumps({"t": self._stream, "s": part}) + "\n" + json.dumps({"t": "done", "overflow": True}) + "\n").encode())
                while view:
                    view = view[os.write(_proto, view):]
                os._exit(0)
            _left[0] -= len(data)
        _send({"t": self._stream, "s": text})
        return len(text)

sys.stdout = _Writer("out")
sys.stderr = _Writer("err")

def _default(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, (pandas.DataFrame, pandas.Series)):
        # NaN becomes null and dates ISO text, as JSON has them.
        return json.loads(value.to_json(orient="records" if isinstance(value, pandas.DataFrame) else "index", date_format="iso"))
    if isinstance(value, numpy.ndarray):
        return value.tolist()
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, (pandas.Timestamp,)):
        return value.isoformat()
    raise TypeError(f"a value of type {type(value).__name__} is not JSON")

${DRIVER_COMMON_PY}
def _run(code, namespace):
    tree = ast.parse(code, "main.py", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    body = compile(tree, "main.py", "exec", flags=flags, dont_inherit=True)
    expression = compile(last, "main.py", "eval", flags=flags, dont_inherit=True) if last else None
    is_async = any(c is not None and c.co_flags & inspect.CO_COROUTINE for c in (body, expression))
    if not is_async:
        exec(body, namespace)
        return eval(expression, namespace) if expression else None
    async def main():
        value = eval(body, namespace)
        if inspect.iscoroutine(value):
            await value
        if expression is None:
            return None
        value = eval(expression, namespace)
        return (await value) if inspect.iscoroutine(value) else value
    return asyncio.run(main())

def _main():
    request = _request
    inputs_seen = _write_inputs(request["files"])
    inputs = request["inputs"]
    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "inputs": inputs}
    for name in request["variables"]:
        namespace[name] = inputs[name]
    answer = {"result": None, "error": None, "files": []}
    try:
        _put_result(answer, _run(request["code"], namespace), namespace, " (a DataFrame or an array is turned into lists)")
    except OSError as error:
        # A mapping refused by the address-space limit (mmap, a thread's stack) is the memory limit too.
        answer["error"] = _failure(MemoryError() if error.errno == 12 else error)
    except BaseException as error:
        answer["error"] = _failure(error)
    limits = request["limits"]
    try:
        files, file_error = _collect_files(inputs_seen, limits["max_files"], limits["files_bytes"])
    except OSError as error:
        files, file_error = [], {"code": "runtime_error", "message": f"the working folder cannot be read back: {error}"}
    answer["files"] = files
    if file_error and answer["error"] is None:
        answer["error"] = file_error
    return json.dumps(answer)

_answer = _main()
_send({"t": "done", "answer": _answer})
# Threads the code left running end with the process, now.
os._exit(0)
`;

/**
 * The Python side of a run, executed by Pyodide in the locked-down child: it
 * writes the input files into the working folder, binds the inputs as variables,
 * runs the code (top-level `await` allowed) and returns one JSON text with the
 * result, the changed files and the error. Everything it returns is checked
 * again by the host.
 */
export const PYTHON_DRIVER = `
import base64, json, os, sys, traceback
from pyodide.code import eval_code_async

WORKDIR = "/sandbox"

def _default(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"a value of type {type(value).__name__} is not JSON")

def _own_traceback(error):
    # Keep the frames of the user's code only; the driver's and Pyodide's are noise.
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "main.py"]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(error), error)
    text = "".join(lines)
    return text[-8000:]

def _collect_files(inputs_seen, max_files, max_bytes):
    files, total, count = [], 0, 0
    for root, dirs, names in os.walk(WORKDIR):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(root, name)
            path = os.path.relpath(full, WORKDIR)
            given = inputs_seen.get(path)
            # An input file left as it was is not an output, however large it is.
            if given is not None and os.path.getsize(full) == len(given):
                with open(full, "rb") as handle:
                    if handle.read() == given:
                        continue
            with open(full, "rb") as handle:
                data = handle.read(max_bytes + 1)
            count += 1
            total += len(data)
            if count > max_files or total > max_bytes:
                return files, {
                    "code": "file_limit",
                    "message": f"the code wrote more than {max_files} files or {max_bytes} bytes of files; write fewer or smaller files",
                }
            try:
                files.append({"path": path, "encoding": "utf8", "content": data.decode("utf-8")})
            except UnicodeDecodeError:
                files.append({"path": path, "encoding": "base64", "content": base64.b64encode(data).decode()})
    return files, None

async def stackvm_run(request_json):
    request = json.loads(request_json)
    os.makedirs(WORKDIR, exist_ok=True)
    os.chdir(WORKDIR)
    inputs_seen = {}
    for file in request["files"]:
        full = os.path.join(WORKDIR, file["path"])
        os.makedirs(os.path.dirname(full), exist_ok=True)
        data = file["content"].encode() if file["encoding"] == "utf8" else base64.b64decode(file["content"])
        with open(full, "wb") as handle:
            handle.write(data)
        inputs_seen[file["path"]] = data
    inputs = request["inputs"]
    namespace = {"__name__": "__main__", "inputs": inputs}
    for name in request["variables"]:
        namespace[name] = inputs[name]
    answer = {"result": None, "error": None, "files": []}
    try:
        value = await eval_code_async(request["code"], namespace, filename="main.py")
        if value is None and "result" in namespace:
            value = namespace["result"]
        try:
            answer["result"] = json.dumps(value, default=_default, allow_nan=False)
        except (TypeError, ValueError) as error:
            answer["error"] = {
                "code": "result_not_json",
                "message": f"the result cannot be turned into JSON ({error}); return dicts, lists, strings, numbers, booleans or None",
            }
    except SyntaxError as error:
        answer["error"] = {
            "code": "syntax_error",
            "message": f"{type(error).__name__}: {error.msg} (line {error.lineno})",
            "traceback": "".join(traceback.format_exception_only(type(error), error))[-8000:],
        }
    except MemoryError:
        answer["error"] = {"code": "memory_limit", "message": "MemoryError"}
    except SystemExit as error:
        if error.code not in (None, 0):
            answer["error"] = {"code": "runtime_error", "message": f"the code called sys.exit({error.code!r})"}
    except BaseException as error:
        answer["error"] = {
            "code": "runtime_error",
            "message": f"{type(error).__name__}: {error}"[:4000],
            "traceback": _own_traceback(error),
        }
    sys.stdout.flush()
    sys.stderr.flush()
    limits = request["limits"]
    files, file_error = _collect_files(inputs_seen, limits["max_files"], limits["files_bytes"])
    answer["files"] = files
    if file_error and answer["error"] is None:
        answer["error"] = file_error
    return json.dumps(answer)
`;

/**
 * The Python side of a run, executed by Pyodide in the locked-down child: it
 * writes the input files into the working folder, binds the inputs as variables,
 * runs the code (top-level `await` allowed) and returns one JSON text with the
 * result, the changed files and the error. Everything it returns is checked
 * again by the host. The working folder's files, the result and the error are
 * `driver-common-py.ts`, shared with the data engine's child.
 */
import { DRIVER_COMMON_PY } from "./driver-common-py";

export const PYTHON_DRIVER = `
import base64, json, os, stat, sys, traceback
from pyodide.code import eval_code_async

WORKDIR = "/sandbox"

def _default(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"a value of type {type(value).__name__} is not JSON")

${DRIVER_COMMON_PY}
async def stackvm_run(request_json):
    request = json.loads(request_json)
    os.makedirs(WORKDIR, exist_ok=True)
    os.chdir(WORKDIR)
    inputs_seen = _write_inputs(request["files"])
    inputs = request["inputs"]
    namespace = {"__name__": "__main__", "inputs": inputs}
    for name in request["variables"]:
        namespace[name] = inputs[name]
    answer = {"result": None, "error": None, "files": []}
    try:
        _put_result(answer, await eval_code_async(request["code"], namespace, filename="main.py"), namespace, "")
    except BaseException as error:
        answer["error"] = _failure(error)
    sys.stdout.flush()
    sys.stderr.flush()
    limits = request["limits"]
    files, file_error = _collect_files(inputs_seen, limits["max_files"], limits["files_bytes"])
    answer["files"] = files
    if file_error and answer["error"] is None:
        answer["error"] = file_error
    return json.dumps(answer)
`;

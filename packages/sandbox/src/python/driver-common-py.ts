/**
 * The Python both engines' drivers share, pasted into each (`driver-py.ts`
 * under Pyodide, `data-child-py.ts` under CPython) so that the two cannot drift
 * apart on what a run answers: the input files written in; the outputs read
 * back under the same limits, an unchanged input never sent back as an output,
 * and only regular files read (a link could name a file outside the folder, a
 * FIFO would block the read); the result as JSON or `result_not_json`; and what
 * the user's code raised as the answer's error, with its own frames only.
 * Each driver defines `WORKDIR` and `_default` (what JSON it makes of other
 * values) and imports `base64`, `json`, `os`, `stat` and `traceback` before it.
 */
export const DRIVER_COMMON_PY = `
def _write_inputs(files):
    # The input files, written into the working folder; their bytes, by path, to tell an unchanged one.
    inputs_seen = {}
    for file in files:
        full = os.path.join(WORKDIR, file["path"])
        os.makedirs(os.path.dirname(full), exist_ok=True)
        data = file["content"].encode() if file["encoding"] == "utf8" else base64.b64decode(file["content"])
        with open(full, "wb") as handle:
            handle.write(data)
        inputs_seen[file["path"]] = data
    return inputs_seen

def _own_traceback(error):
    # Keep the frames of the user's code only; the driver's and the engine's are noise.
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "main.py"]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(error), error)
    return "".join(lines)[-8000:]

def _put_result(answer, value, namespace, hint):
    # The code's value (else its variable result) as JSON text, or result_not_json saying what to return.
    if value is None and "result" in namespace:
        value = namespace["result"]
    try:
        answer["result"] = json.dumps(value, default=_default, allow_nan=False)
    except (TypeError, ValueError) as error:
        answer["error"] = {
            "code": "result_not_json",
            "message": f"the result cannot be turned into JSON ({error}); return dicts, lists, strings, numbers, booleans or None{hint}",
        }

def _failure(error):
    # The answer's error for what the user's code raised; None for sys.exit() or sys.exit(0).
    if isinstance(error, SyntaxError):
        return {
            "code": "syntax_error",
            "message": f"{type(error).__name__}: {error.msg} (line {error.lineno})",
            "traceback": "".join(traceback.format_exception_only(type(error), error))[-8000:],
        }
    if isinstance(error, MemoryError):
        return {"code": "memory_limit", "message": "MemoryError"}
    if isinstance(error, SystemExit):
        if error.code in (None, 0):
            return None
        return {"code": "runtime_error", "message": f"the code called sys.exit({error.code!r})"}
    return {
        "code": "runtime_error",
        "message": f"{type(error).__name__}: {error}"[:4000],
        "traceback": _own_traceback(error),
    }

def _collect_files(inputs_seen, max_files, max_bytes):
    files, total, count = [], 0, 0
    for root, dirs, names in os.walk(WORKDIR):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(root, name)
            path = os.path.relpath(full, WORKDIR)
            # Regular files only: a link could name a file outside the folder, a FIFO would block.
            if not stat.S_ISREG(os.lstat(full).st_mode):
                continue
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
`;

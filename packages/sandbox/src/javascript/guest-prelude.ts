/**
 * JavaScript that runs inside each fresh QuickJS context before the code: it
 * defines `console`, `files` (the virtual working folder), `inputs` and one
 * variable per input, and hands the host a few helpers to read the result, the
 * files and errors out as bounded strings. It runs as guest code, so nothing in
 * it is trusted: the host checks every string it receives.
 *
 * The prelude is a function expression; the host calls it with
 * `(write, inputsJson, filesJson, variableNames)`.
 */
export const GUEST_PRELUDE = String.raw`(function (write, inputsJson, filesJson, variableNames) {
  "use strict";
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

  function toBase64(bytes) {
    let out = "";
    for (let i = 0; i < bytes.length; i += 3) {
      const a = bytes[i], b = bytes[i + 1], c = bytes[i + 2];
      out += B64[a >> 2] + B64[((a & 3) << 4) | ((b ?? 0) >> 4)];
      out += b === undefined ? "=" : B64[((b & 15) << 2) | ((c ?? 0) >> 6)];
      out += c === undefined ? "=" : B64[c & 63];
    }
    return out;
  }

  // A table from character code to its six bits, built once per run: a search
  // of the alphabet for every character took 23 s for 20 MiB in QuickJS.
  const B64_VALUE = new Uint8Array(128);
  for (let i = 0; i < 64; i++) B64_VALUE[B64.charCodeAt(i)] = i;

  function fromBase64(text) {
    let end = text.length;
    while (end > 0 && text.charCodeAt(end - 1) === 61) end--;
    const bytes = new Uint8Array(Math.floor((end * 3) / 4));
    let n = 0, i = 0;
    for (; i + 4 <= end; i += 4) {
      const v = (B64_VALUE[text.charCodeAt(i) & 127] << 18) | (B64_VALUE[text.charCodeAt(i + 1) & 127] << 12) |
        (B64_VALUE[text.charCodeAt(i + 2) & 127] << 6) | B64_VALUE[text.charCodeAt(i + 3) & 127];
      bytes[n++] = v >> 16; bytes[n++] = (v >> 8) & 255; bytes[n++] = v & 255;
    }
    let bits = 0, value = 0;
    for (; i < end; i++) {
      value = (value << 6) | B64_VALUE[text.charCodeAt(i) & 127];
      bits += 6;
      if (bits >= 8) { bits -= 8; bytes[n++] = (value >> bits) & 255; }
    }
    return bytes;
  }

  function show(value) {
    if (typeof value === "string") return value;
    if (value === undefined) return "undefined";
    if (typeof value === "function") return "[Function " + (value.name || "anonymous") + "]";
    if (value instanceof Error) return value.name + ": " + value.message;
    if (typeof value === "bigint") return value + "n";
    try {
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch {
      return String(value);
    }
  }

  function printer(fd) {
    return function (...args) {
      let line = "";
      for (let i = 0; i < args.length; i++) line += (i ? " " : "") + show(args[i]);
      write(fd, line + "\n");
    };
  }

  globalThis.console = Object.freeze({
    log: printer(1), info: printer(1), debug: printer(1),
    warn: printer(2), error: printer(2),
  });

  const store = new Map();
  const changed = new Set();
  for (const file of parse(filesJson)) store.set(file.path, { encoding: file.encoding, content: file.content });

  function checkPath(path) {
    if (typeof path !== "string" || path === "") throw new TypeError("files: a path must be a non-empty string, like 'out/report.csv'");
    const clean = path.replace(/^(\.\/)+/, "");
    const parts = clean.split("/");
    if (clean.startsWith("/") || parts.some((p) => p === "" || p === "." || p === "..")) {
      throw new TypeError("files: '" + path + "' leaves the working folder; use a relative path like 'out/report.csv'");
    }
    return clean;
  }

  globalThis.files = Object.freeze({
    /** Writes text (a string) or bytes (a Uint8Array or ArrayBuffer) to a file of the working folder. */
    write(path, data) {
      const p = checkPath(path);
      if (typeof data === "string") store.set(p, { encoding: "utf8", content: data });
      else if (data instanceof Uint8Array) store.set(p, { encoding: "base64", content: toBase64(data) });
      else if (data instanceof ArrayBuffer) store.set(p, { encoding: "base64", content: toBase64(new Uint8Array(data)) });
      else throw new TypeError("files.write takes a string or a Uint8Array; use JSON.stringify(value) for other values");
      changed.add(p);
    },
    /** Reads a file: a string for text, a Uint8Array for binary files. */
    read(path) {
      const p = checkPath(path);
      const file = store.get(p);
      if (!file) throw new Error("files.read: no file '" + p + "' in the working folder (files.list() names them)");
      return file.encoding === "utf8" ? file.content : fromBase64(file.content);
    },
    exists(path) { return store.has(checkPath(path)); },
    list() { return [...store.keys()].sort(); },
    remove(path) { const p = checkPath(path); store.delete(p); changed.delete(p); },
  });

  const inputs = parse(inputsJson);
  globalThis.inputs = inputs;
  for (const name of variableNames) globalThis[name] = inputs[name];

  return Object.freeze({
    /** The value as JSON text, "null" for undefined; throws when it cannot be JSON. */
    json(value) {
      if (value === undefined) return "null";
      const text = stringify(value);
      if (text === undefined) throw new TypeError("a " + typeof value + " is not a JSON value");
      return text;
    },
    /** The files written during the run, as JSON. */
    files() {
      const out = [];
      for (const path of changed) {
        const file = store.get(path);
        if (file) out[out.length] = { path, encoding: file.encoding, content: file.content };
      }
      return stringify(out);
    },
    /** A thrown value as JSON {name, message, stack}, each part cut to a few KiB. */
    describe(error) {
      const cut = (s) => (typeof s === "string" ? s.slice(0, 4000) : undefined);
      try {
        if (error instanceof Error) return stringify({ name: cut(error.name), message: cut(error.message), stack: cut(error.stack) });
        return stringify({ name: "Thrown", message: cut(show(error)) });
      } catch {
        return stringify({ name: "Thrown", message: "a value that cannot be shown" });
      }
    },
  });
})`;

/**
 * What the model is told when it writes sandbox code: the rules of the sandbox
 * for the language, and the input variables with their shapes and a sample, so
 * that it writes code for the data it will get.
 */
import { DATA_LIBRARIES } from "../sandbox/data-libraries";
import type { SandboxLanguage } from "../sandbox/protocol";
import { isInputVariable } from "../sandbox/protocol";

/** The data libraries' versions, as the sandbox has them pinned. */
const v = Object.fromEntries(
  Object.entries(DATA_LIBRARIES).map(([name, pin]) => [
    name,
    pin.version.split(".").slice(0, 2).join("."),
  ]),
) as Record<keyof typeof DATA_LIBRARIES, string>;

const RULES: Record<SandboxLanguage, string> = {
  python: [
    "You write one Python 3 program that runs in a locked-down sandbox.",
    "- The standard library (json, math, statistics, re, datetime, csv, collections, itertools, decimal, ...), and for data work " +
      `numpy ${v.numpy}, pandas ${v.pandas}, matplotlib ${v.matplotlib} and openpyxl ${v.openpyxl}. Nothing else (no requests, no scipy).`,
    `- A program that imports numpy, pandas, matplotlib or openpyxl runs in CPython ${v.python}; write for that version then. Matplotlib draws without a display: save a chart with plt.savefig('chart.png').`,
    "- No network, no subprocesses, no input(); time and memory are limited (10 s and 256 MiB by default).",
    "- The inputs are variables of the program (and all of them are in the dict `inputs`). Input files are in the working folder (pd.read_csv('data.csv')).",
    "- The result is the value of the last expression, or of a variable named `result`; it must be JSON: dicts, lists, strings, numbers, booleans, None (a DataFrame becomes a list of rows, a Series a dict, an array a list, NaN null).",
    "- print() for short diagnostics only. Files written in the working folder (open('out.csv', 'w'), df.to_excel('out.xlsx'), plt.savefig('chart.png')) are returned.",
  ].join("\n"),
  javascript: [
    "You write one JavaScript program (ES2023, QuickJS) that runs in a locked-down sandbox.",
    "- Built-in objects only: no require, no import, no process, no fetch, no timers (no setTimeout).",
    "- Time and memory are limited (10 s and 256 MiB by default).",
    "- The inputs are variables of the program (and all of them are in the object `inputs`).",
    "- The result is the value of the last expression, or of a top-level `return`, or of a variable named `result`; it must be JSON. Top-level await is allowed.",
    "- console.log for short diagnostics only. files.write(path, text) writes a file of the working folder, which is returned; files.read(path) and files.list() read them.",
  ].join("\n"),
};

/** The system message for writing code in a language. */
export function sandboxRules(language: SandboxLanguage): string {
  return `${RULES[language]}\nAlways answer with one JSON object: {"done": boolean, "code": string, "explanation": string}.`;
}

/**
 * The inputs as the model sees them: each name with its shape and a sample.
 *
 * @example
 * describeInputs({ rows: [{ a: 1 }] }) // "Input variables:\n- rows: array of 1 × object {a: number}\n  sample: [{\"a\":1}]"
 */
export function describeInputs(inputs: Record<string, unknown>): string {
  const names = Object.keys(inputs);
  if (names.length === 0) return "The program has no inputs.";
  const lines = ["Input variables:"];
  for (const name of names) {
    const value = inputs[name];
    const access = isInputVariable(name) ? name : `inputs[${JSON.stringify(name)}]`;
    lines.push(`- ${access}: ${shapeOf(value, 0)}`);
    lines.push(`  sample: ${sample(value)}`);
  }
  return lines.join("\n");
}

/** A short type description, a few levels deep. */
export function shapeOf(value: unknown, depth: number): string {
  if (value === null) return "null";
  if (Array.isArray(value)) {
    if (value.length === 0) return "empty array";
    return `array of ${value.length} × ${depth >= 2 ? typeof value[0] : shapeOf(value[0], depth + 1)}`;
  }
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (depth >= 2) return `object with ${entries.length} keys`;
    const shown = entries.slice(0, 12).map(([key, v]) => `${key}: ${shapeOf(v, depth + 1)}`);
    const more = entries.length > 12 ? `, … ${entries.length - 12} more` : "";
    return `object {${shown.join(", ")}${more}}`;
  }
  if (typeof value === "string")
    return value.length > 80 ? `string (${value.length} characters)` : "string";
  return typeof value;
}

function sample(value: unknown): string {
  const shown = Array.isArray(value) ? value.slice(0, 3) : value;
  const text = JSON.stringify(shown) ?? "null";
  return text.length <= 600 ? text : `${text.slice(0, 600)}…`;
}

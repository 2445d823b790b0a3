/**
 * The data engine's libraries: which ones it has (and at which versions they
 * are pinned), and how a program is routed to it. Python that imports none of
 * them runs in Pyodide, whose WebAssembly interpreter is one more layer between
 * the code and the kernel; Python that imports one of them runs in CPython from
 * the system's packages, behind the same OS boundary (see ARCHITECTURE.md).
 */

export { DATA_LIBRARIES } from "@stackvm/core/sandbox-data-libraries";

/**
 * The top-level modules that send a program to the data engine: the four
 * libraries and the packages they are built on, none of which Pyodide's
 * standard library has.
 */
export const DATA_MODULES: ReadonlySet<string> = new Set([
  "numpy",
  "pandas",
  "matplotlib",
  "openpyxl",
  // What they bring along, which code written for them imports too.
  "mpl_toolkits",
  "dateutil",
  "pytz",
  "PIL",
  "et_xmlfile",
  "contourpy",
  "cycler",
  "kiwisolver",
  "fontTools",
  "pyparsing",
]);

const IMPORT_LINE = /^[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b|import[ \t]+([^\n#;]+))/gm;

/**
 * True when the code imports one of the data libraries in an `import` or `from`
 * statement (at any indentation). An import made another way
 * (`__import__("pandas")`, `importlib`) is not seen: it runs in Pyodide, where
 * the module is not found and the error says so.
 *
 * @example
 * importsDataLibraries("import pandas as pd\npd.DataFrame()") // true
 * importsDataLibraries("import json, csv") // false
 */
export function importsDataLibraries(code: string): boolean {
  for (const match of code.matchAll(IMPORT_LINE)) {
    const names = match[1] ? [match[1]] : (match[2] ?? "").split(",");
    for (const name of names) {
      const top = name.trim().split(/[\s.]/)[0] ?? "";
      if (DATA_MODULES.has(top)) return true;
    }
  }
  return false;
}

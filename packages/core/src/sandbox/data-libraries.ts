/**
 * The libraries of the sandbox's data engine and the versions they are pinned
 * to: Debian 12's packages, which `scripts/setup-system.sh` installs (a test
 * checks that the two lists agree). The sandbox runs Python that imports one of
 * them in CPython with these libraries; the code prompt names them, and
 * `doctor` compares what the sandbox really has with these pins. Plain
 * constants, so that the sandbox function reads them without the rest of core;
 * `importsDataLibraries` is how a program is routed to the data engine, by the
 * sandbox locally and by the worker on AWS (to the data sandbox function).
 */
export const DATA_LIBRARIES = {
  python: { debian: "python3.11", version: "3.11.2" },
  numpy: { debian: "python3-numpy", version: "1.24.2" },
  pandas: { debian: "python3-pandas", version: "1.5.3" },
  matplotlib: { debian: "python3-matplotlib", version: "3.6.3" },
  openpyxl: { debian: "python3-openpyxl", version: "3.0.9" },
} as const;

/** A program that answers the versions the sandbox has, as `{python, numpy, ...}`. */
export const DATA_VERSIONS_PROBE =
  "import sys, numpy, pandas, matplotlib, openpyxl\n{'python': sys.version.split()[0], 'numpy': numpy.__version__, 'pandas': pandas.__version__, 'matplotlib': matplotlib.__version__, 'openpyxl': openpyxl.__version__}";

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

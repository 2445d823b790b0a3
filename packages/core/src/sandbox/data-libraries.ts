/**
 * The libraries of the sandbox's data engine and the versions they are pinned
 * to: Debian 12's packages, which `scripts/setup-system.sh` installs (a test
 * checks that the two lists agree). The sandbox runs Python that imports one of
 * them in CPython with these libraries; the code prompt names them, and
 * `doctor` compares what the sandbox really has with these pins. Plain
 * constants, so that the sandbox function reads them without the rest of core.
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

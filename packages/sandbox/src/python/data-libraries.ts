/**
 * The data engine's libraries: which ones it has (and at which versions they
 * are pinned), and how a program is routed to it. Python that imports none of
 * them runs in Pyodide, whose WebAssembly interpreter is one more layer between
 * the code and the kernel; Python that imports one of them runs in CPython from
 * the system's packages, behind the same OS boundary (see ARCHITECTURE.md).
 * The routing itself is core's, since the worker on AWS routes by it too (to
 * the data sandbox function).
 */

export {
  DATA_LIBRARIES,
  DATA_MODULES,
  importsDataLibraries,
} from "@stackvm/core/sandbox-data-libraries";

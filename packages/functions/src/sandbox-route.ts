/**
 * Which sandbox function runs a request on AWS. Python that imports numpy,
 * pandas, matplotlib or openpyxl needs the data engine, which runs in its own
 * function (`SandboxData`, a container image that serves one run per
 * instance); everything else goes to the sandbox function, whose Pyodide and
 * QuickJS start in milliseconds on a warm instance. The test is the one the
 * sandbox applies locally (`importsDataLibraries`), so a program runs in the
 * same engine on both.
 *
 * Without a data function, every request goes to the sandbox function, which
 * refuses the data libraries with an error that says so.
 */
import type { SandboxPort } from "@stackvm/core";
import { importsDataLibraries } from "@stackvm/core/sandbox-data-libraries";

/**
 * @example
 * const sandbox = routeSandbox(lazyLambdaSandbox(region, "Sandbox"), lazyLambdaSandbox(region, "SandboxData"));
 * await sandbox.run({ v: 1, language: "python", code: "import pandas as pd\n..." }); // SandboxData
 */
export function routeSandbox(sandbox: SandboxPort, data: SandboxPort | null): SandboxPort {
  if (!data) return sandbox;
  return {
    run: (request) =>
      request.language === "python" && importsDataLibraries(request.code)
        ? data.run(request)
        : sandbox.run(request),
  };
}

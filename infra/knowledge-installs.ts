/**
 * What the knowledge function carries beside its bundle: LanceDB (a native
 * module, about 200 MB unpacked, that esbuild cannot bundle) with its native
 * package for the function's architecture, Apache Arrow (its peer) and unpdf
 * (pdf.js, 2 MB that only an ingest of a PDF loads). Every function leaves them
 * external (infra/function-defaults.ts); only the knowledge function installs
 * them (infra/knowledge.ts). A plain module, without SST's globals, so that
 * scripts/bundles.ts and the tests can read it.
 */
import type { Architecture, InstallSpec } from "./function-installs";
import { npmCpu } from "./function-installs";

/** The packages no function bundles. */
export const knowledgeInstalls = ["@lancedb/lancedb", "unpdf"];

/**
 * The knowledge function's architecture: x86_64, not Graviton, because the npm
 * registry serves no linux-arm64 build of the pinned LanceDB (0.39.0; the last
 * `@lancedb/lancedb-linux-arm64-gnu` it has is 0.31.0), and a function whose
 * native module does not load cannot search. The package check
 * (`npm run bundle`) installs for this architecture and reads the installed
 * binary's ELF header; set `arm64` here once it can install an arm64 build.
 */
export const knowledgeArchitecture: Architecture = "x86_64";

/** The install of the knowledge function for `arch`: no optional dependencies, the native package named. */
export function knowledgeInstallSpec(arch: Architecture = knowledgeArchitecture): InstallSpec {
  return {
    packages: ["@lancedb/lancedb", "apache-arrow", "unpdf"],
    omitOptional: true,
    native: [["@lancedb/lancedb", `@lancedb/lancedb-linux-${npmCpu(arch)}-gnu`]],
  };
}

/**
 * The packages of knowledge that functions do not bundle: LanceDB (a native
 * module, about 200 MB unpacked, that esbuild cannot bundle) and unpdf (pdf.js,
 * 2 MB that only an ingest of a PDF loads). Every function leaves them external
 * (the API and the others import the code that would load them but never run
 * it); the worker installs them beside its bundle (`nodejs.install`).
 * A plain module, without SST's globals, so that scripts/bundles.ts can read it.
 */
export const knowledgeInstalls = ["@lancedb/lancedb", "unpdf"];

/**
 * What the API installs beside its bundle (`nodejs.install`): Swagger UI's
 * files, which `/docs` reads from the package's folder. A plain module, without
 * SST's globals, so that the package check (scripts/bundles.ts) installs the same.
 */
export const apiInstalls = ["swagger-ui-dist"];

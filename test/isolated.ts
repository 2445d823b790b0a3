/**
 * Files that change what the next file in the same process would see: module
 * mocks, stubbed globals or environment, fake timers, `process.env` set by hand.
 * They run as Vitest runs every file by default, each in a fresh process; every
 * other file shares its worker's process with the files before it
 * (vitest.config.ts). `test/isolated.test.ts` fails on a file that does one of
 * these things and is not listed here.
 */
export const ISOLATED = [
  "packages/cli/src/controls.test.ts",
  "packages/core/src/service/stream-leases.test.ts",
  "packages/core/src/webhooks/signature.test.ts",
  "packages/functions/src/tool-secrets.test.ts",
  "packages/functions/src/worker.test.ts",
  "packages/local/src/local-scheduler.test.ts",
  "packages/local/src/sandbox-invoker.test.ts",
  "packages/sandbox/src/python/data.test.ts",
  "packages/sandbox/src/python/python.test.ts",
  "packages/web/src/client/task-feed.test.ts",
  "test/system/bedrock.test.ts",
];

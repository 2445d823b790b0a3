/**
 * Makes the real llama.cpp server the tests run against (test/support/llama-server.ts):
 * builds `llama-server` from node-llama-cpp's bundled source when it is not cached,
 * and writes the tiny test model next to it. `npm test` runs it before the tests
 * (`pretest`); on a warm machine it only finds both files there. To rebuild, delete
 * `.stackvm/llama/` (see docs/testing.md).
 */
import { ensureLlamaServer } from "../test/support/llama/build";
import { ensureTinyModel } from "../test/support/llama/tiny-model";

const { server, built, seconds } = await ensureLlamaServer();
const model = await ensureTinyModel();
process.stdout.write(
  `${built ? `llama-server: built in ${seconds} s` : `llama-server: cached (${server})`}; model: ${model}\n`,
);

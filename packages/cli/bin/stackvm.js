#!/usr/bin/env node
// The `stackvm` command. It runs the TypeScript sources through tsx's loader, so
// the workspace needs no build step: `npm ci`, then `npx stackvm --help`.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));

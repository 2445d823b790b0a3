/** @stackvm/cli: the `stackvm` command (bin/stackvm.js runs `main`). */
export { EXIT } from "./exit-codes";
export { COMMANDS, main } from "./main";

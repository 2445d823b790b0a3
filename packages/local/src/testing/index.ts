/** @stackvm/local/testing: what tests give the local stack besides its production options. */
export type { LocalTestHooks } from "./test-hooks";
export { splitTestHooks } from "./test-hooks";

/** @stackvm/cli */
export {};

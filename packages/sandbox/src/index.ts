/** @stackvm/sandbox */
export {};

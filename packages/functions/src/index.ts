/** @stackvm/functions */
export {};

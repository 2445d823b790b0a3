/** @stackvm/local */
export {};

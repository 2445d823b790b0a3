/** @stackvm/web */
export {};

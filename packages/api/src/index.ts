/** @stackvm/api */
export {};

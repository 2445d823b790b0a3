/** @stackvm/aws */
export {};

/**
 * How much one `knowledge_add` call may write, shared by the tool's input and
 * the knowledge protocol's request (so both ends refuse the same text).
 */

/** The longest text one call adds: 100,000 characters (about 25 chunks). */
export const MEMORY_MAX_CHARS = 100_000;

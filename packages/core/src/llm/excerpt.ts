/**
 * A short excerpt of a refused answer for a repair prompt: the model is told what
 * was wrong and shown the start of what it wrote, never the whole of it, so that
 * each repair round costs about what the first request did (an answer cut at
 * 6,000 tokens sent back whole made the next request 9,061 tokens).
 */

/** How much of a refused answer a repair prompt repeats. */
export const REPAIR_EXCERPT_CHARS = 600;

/**
 * The text up to `max` characters, with how much was left out.
 *
 * @example
 * repairExcerpt("x".repeat(700)) // "xxx…x\n… (100 more characters not repeated)"
 */
export function repairExcerpt(text: string, max = REPAIR_EXCERPT_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… (${(text.length - max).toLocaleString("en-US")} more characters not repeated)`;
}

/** How the eval waits between two reads of something the stack is doing. */

/**
 * Waits between reads of a running task: 100 ms, then half as long again each
 * time, up to `maxMs`. Reads cost the stack CPU (on the in-process stack, the
 * eval's own), and fifty cases read every 100 ms spent more than their steps.
 */
export function backoff(maxMs = 2000): () => Promise<void> {
  let ms = 100;
  return async () => {
    await new Promise((r) => setTimeout(r, ms));
    ms = Math.min(maxMs, ms * 1.5);
  };
}

/**
 * A module or an adapter loaded on first use: the cold start does not parse what
 * most invocations never call (the bundler makes each dynamic `import()` a chunk
 * of its own).
 */

/**
 * Wraps `load` so that it runs once: concurrent first calls share one load, later
 * calls get its result, and a load that failed is tried again by the next call
 * (the error reaches the caller).
 *
 * @example
 * const validator = loadOnce(() => import("./plan/validate"));
 * const { validatePlan } = await validator();
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

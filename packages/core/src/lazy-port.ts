/**
 * A port whose adapter is imported on first use instead of at cold start.
 *
 * A function's cold start parses and runs every module its entry imports, and
 * the adapters most invocations never call (an SDK client, the planner's
 * prompts and schemas) stay out of it: each is a dynamic `import()`, which the
 * bundler makes a chunk of its own, loaded by the first call that needs it.
 *
 * The port's methods are not listed anywhere: every property read on the port
 * is a method that loads the adapter and calls the adapter's method of that
 * name, so a method added to the port's interface is forwarded as soon as the
 * adapter has it. Every method of a port this wraps is async (the type says so),
 * which is what lets a call wait for the load. A method the loaded adapter does
 * not have answers `undefined`: that is what the ports' optional methods answer
 * when their server cannot say (`LlmPort.contextTokens`, `countTokens`), and the
 * type rules out a required one being missing.
 */
import { loadOnce } from "./load-once";

/** A port every member of which is an async method (optional ones too). */
export type AsyncPort<T> = {
  [K in keyof T]: ((...args: never[]) => Promise<unknown>) | undefined;
};

/**
 * Names a caller may probe on any object without meaning a port's method: a
 * promise's resolution asks for `then` (a port returned from an async function),
 * `JSON.stringify` for `toJSON`, and test matchers for these when they print.
 */
const NOT_METHODS = new Set(["then", "toJSON", "constructor", "asymmetricMatch", "$$typeof"]);

/**
 * The port `T`, its adapter built by `load` on the first call of any method:
 * concurrent first calls share one load, a load that failed is tried again by
 * the next call (its error reaches the caller), and the adapter's own errors
 * pass through unchanged.
 *
 * @example
 * const blobs = lazyPort<Blobs>(async () => {
 *   const { S3Blobs, s3Client } = await import("./s3-blobs");
 *   return new S3Blobs(s3Client(options), bucket);
 * });
 */
export function lazyPort<T extends AsyncPort<T>>(load: () => Promise<T>): T {
  const adapter = loadOnce(load);
  const methods = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  const methodNamed = (name: string) => {
    let method = methods.get(name);
    if (!method) {
      method = async (...args) => {
        const target = await adapter();
        const own = (target as Record<string, unknown>)[name];
        if (typeof own !== "function") return undefined;
        return own.apply(target, args);
      };
      methods.set(name, method);
    }
    return method;
  };
  return new Proxy({} as T, {
    get: (_, name) =>
      typeof name === "string" && !NOT_METHODS.has(name) ? methodNamed(name) : undefined,
    has: (_, name) => typeof name === "string" && !NOT_METHODS.has(name),
  });
}

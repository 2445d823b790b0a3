/**
 * Ports whose adapter is imported on first use instead of at cold start.
 *
 * A function's cold start parses and runs every module its entry imports, and
 * the AWS SDK clients are the heaviest of them (the S3 client with its
 * presigner is about 150 KB minified). Adapters that most invocations never
 * call stay out of the entry's import graph: S3 holds only values over 64 KiB,
 * the EventBridge Scheduler client serves only the schedule routes, the
 * OpenAI client only LLM steps, the Lambda client only code steps. Each is a
 * dynamic `import()`, which the bundler (`nodejs.splitting`, infra/*.ts)
 * makes a chunk of its own, loaded by the first call that needs it.
 *
 * Every port method is async, so the wrapper forwards a call once the adapter
 * is loaded; concurrent first calls share one load, and a load that fails is
 * tried again by the next call (the error reaches the caller).
 */
import { loadOnce } from "@stackvm/core";

/** The async methods of a port. */
type AsyncMethodName<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? K : never;
}[keyof T] &
  string;

/**
 * A port that imports and builds its adapter on the first call of one of `methods`.
 *
 * @example
 * const blobs = onFirstUse<Blobs>(["put", "get", "presign", "deletePrefix"], async () => {
 *   const { S3Blobs, s3Client } = await import("./s3-blobs");
 *   return new S3Blobs(s3Client(options), bucket);
 * });
 */
export function onFirstUse<T extends object>(
  methods: readonly AsyncMethodName<T>[],
  load: () => Promise<T>,
): T {
  const adapter = loadOnce(load);
  const port: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const name of methods) {
    port[name] = async (...args) => {
      const target = await adapter();
      const method = target[name] as (...args: unknown[]) => Promise<unknown>;
      return method.apply(target, args);
    };
  }
  return port as T;
}

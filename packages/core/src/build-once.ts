/**
 * A value built on its first read instead of when its module loads: the input
 * schemas of the tools, which a worker's cold start does not build until a
 * step calls the tool or the planner describes it (docs/deploy.md, "Cold
 * starts"). The synchronous sibling of `loadOnce`.
 *
 * @example
 * const Input = buildOnce(() => z.object({ prompt: z.string() }));
 * Input().parse({ prompt: "hi" }); // built here, once
 */
export function buildOnce<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}

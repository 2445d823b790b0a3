/**
 * Which knowledge bases a step may read or write. Its own module: knowledge_add's
 * write (memory-add.ts) is wired at every start, and the search beside it reads the
 * knowledge model's schemas.
 */
import type { SearchScope } from "./search";

/** The knowledge bases a scope's namespace lists: `default` with no list has every one of the tenant's (undefined); others only those they list. */
export function allowedBases(scope: SearchScope): readonly string[] | undefined {
  return scope.namespace.knowledge_bases ?? (scope.namespace.name === "default" ? undefined : []);
}

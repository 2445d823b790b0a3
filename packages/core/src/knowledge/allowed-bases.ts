/**
 * Which knowledge bases a step may read or write. Its own module: knowledge_add's
 * write (memory-add.ts) is wired at every start, and the search beside it reads the
 * knowledge model's schemas.
 */
/** Which knowledge bases a namespace allows: its list, or every one for `default` without a list. */
export interface SearchScope {
  tenant: string;
  namespace: { name: string; knowledge_bases?: readonly string[] | undefined };
  knowledgeBase?: string | undefined;
}

/** The knowledge bases a scope's namespace lists: `default` with no list has every one of the tenant's (undefined); others only those they list. */
export function allowedBases(scope: SearchScope): readonly string[] | undefined {
  return scope.namespace.knowledge_bases ?? (scope.namespace.name === "default" ? undefined : []);
}

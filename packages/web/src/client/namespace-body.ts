/**
 * The body the namespace editor PUTs. `PUT /v1/namespaces/{name}` replaces the
 * whole namespace, and the editor shows only some of its settings: an edit sends
 * back the ones it does not show, as read just before saving, or they would be
 * reset (knowledge bases, parallel width, sandbox limits, StackVM compatibility).
 */
import type { Namespace } from "@stackvm/core";

/** What the editor's fields hold. */
export interface NamespaceEdits {
  description: string;
  allowed_tools: string[];
  allowed_hosts: string[];
  /** The planner's instructions; empty: none. */
  planner_instructions: string;
  /** How its tasks' plans are written, unless a task says otherwise (`up_front` is saved as absent). */
  planning: "up_front" | "adaptive";
}

/** `current`: the namespace as saved (null for a new one); `edits`: the form's fields. */
export function namespaceBody(
  current: Namespace | null,
  edits: NamespaceEdits,
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  if (current) {
    if (current.sandbox_limits !== undefined) kept.sandbox_limits = current.sandbox_limits;
    if (current.knowledge_bases !== undefined) kept.knowledge_bases = current.knowledge_bases;
    if (current.parallel_width !== undefined) kept.parallel_width = current.parallel_width;
    if (current.plan_compat !== undefined) kept.plan_compat = current.plan_compat;
  }
  return { ...kept, ...edits };
}

/**
 * What checking tools' inputs needs, loaded before a plan that calls them is
 * checked: `validatePlan` parses each call's input synchronously, and a tool's
 * input may need a module loaded on first use (ask_human: the JSON Schema
 * compiler). The callers that check plans (namespace resolution for the API,
 * the planner's steps) await this first; a step that only runs an instruction
 * prepares just the tool it calls.
 */
import type { Tool } from "./tool";

/**
 * Awaits every tool's `prepare`; tools without one cost nothing.
 *
 * @example
 * await prepareTools(resolved.tools.all.values());
 * validatePlan(plan, { tools: resolved.tools.all, ... });
 */
export async function prepareTools(tools: Iterable<Tool>): Promise<void> {
  await Promise.all([...tools].map((tool) => tool.prepare?.()));
}

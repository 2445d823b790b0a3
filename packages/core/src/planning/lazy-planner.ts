/**
 * The planner, loaded on first use. Only the step that plans a goal or updates
 * a plan asks for it; the prompts, the answer schemas and the repair loop
 * (`planner.ts` and what it imports) are a chunk of their own in the worker's
 * bundle, so that the cold start of a worker whose step runs an instruction
 * does not parse and build them.
 */
import { lazyPort } from "../lazy-port";
import type { Planner } from "../vm/planner-port";
import type { PlannerDeps } from "./planner";

/**
 * A {@link Planner} that imports `planner.ts` on its first call and hands every
 * call to `createPlanner(deps)`. A load that failed is tried again by the next call.
 *
 * @example
 * const planner = lazyPlanner({ clock, repairRounds: 2 });
 * const { plan } = await planner.plan(input); // loads the planner, then plans
 */
export function lazyPlanner(deps: PlannerDeps): Planner {
  return lazyPort<Planner>(async () => (await import("./planner")).createPlanner(deps));
}

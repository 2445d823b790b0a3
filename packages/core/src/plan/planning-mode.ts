/**
 * How a task's plan is written: `up_front` (the default), the whole plan before
 * the first step; or `adaptive`, the next instruction or few at a time, the
 * planner seeing each result before it writes more, until it sets
 * `final_answer`. A namespace's setting (`planning`), which a task may override.
 */
import * as z from "zod";

export const PlanningMode = z.enum(["up_front", "adaptive"]);
export type PlanningMode = z.infer<typeof PlanningMode>;

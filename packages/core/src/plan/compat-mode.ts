/**
 * How plans are read and run (plan-language.md, "StackVM compatibility mode"):
 * `strict`, the default, refuses a reference that nothing sets and fails a step
 * whose reference does not resolve; `stackvm` reads them as the original StackVM
 * did: warnings at validation, and the reference left as text at run time.
 * A namespace's setting (`plan_compat`), which a task may override.
 */
import * as z from "zod";

export const PlanCompat = z.enum(["strict", "stackvm"]);
export type PlanCompat = z.infer<typeof PlanCompat>;

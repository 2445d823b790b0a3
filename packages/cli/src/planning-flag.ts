/**
 * `--planning`, shared by `stackvm run` and `stackvm namespace create|update`:
 * how a task's plan is written, `up_front` (the whole plan before the first
 * step) or `adaptive` (the next instruction or few after each result). Checked
 * here so a typo is a usage error that lists the two values, not a 400.
 */
import { usage } from "./exit-codes";

/** The API's `planning` values (`PlanningMode` in core). */
export type PlanningMode = "up_front" | "adaptive";

const MODES: readonly PlanningMode[] = ["up_front", "adaptive"];

/** The flag's value as a planning mode, or a usage error of `command` naming the allowed ones. */
export function planningFlag(value: unknown, command: string): PlanningMode {
  if (MODES.includes(value as PlanningMode)) return value as PlanningMode;
  throw usage(`--planning is up_front or adaptive, not '${String(value)}'`, command);
}

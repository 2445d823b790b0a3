/**
 * The planning modes as a select's options (the new-task and namespace forms):
 * one wording of what each mode does.
 */

/** A planning mode: the whole plan first, or the next step or few after each result. */
export type PlanningChoice = "up_front" | "adaptive";

/** The two modes' options, with `selected` marked. */
export function PlanningOptions({ selected }: { selected: string }) {
  return (
    <>
      <option value="up_front" selected={selected === "up_front"}>
        up front: the whole plan before the first step
      </option>
      <option value="adaptive" selected={selected === "adaptive"}>
        adaptive: the next step or few after each result (explore, then decide)
      </option>
    </>
  );
}

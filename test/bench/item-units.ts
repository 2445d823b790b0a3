/**
 * What DynamoDB bills a task's head moves and step reads, from its branch item
 * at the end. A step's update is billed by the larger of the item before and
 * after it, in whole 1 KB units, and a strongly consistent read by the item in
 * whole 4 KB units, whatever the update changed or the read projected. The
 * branch at depth `d` is the final one with only the variables set at depths up
 * to `d` (its `var_depth` says which): exact for the bench's plans, whose steps
 * each set a new variable and leave the rest of the item the same size.
 */
import { itemSize } from "@stackvm/core";

const units = (bytes: number, per: number) => Math.max(1, Math.ceil(bytes / per));

export function headMoveUnits(branch: Record<string, unknown>): {
  /** Mean write units of a head move over the task's steps. */
  write_units: number;
  /** Mean read units of the step's read of its branch. */
  read_units: number;
  /** Branch item bytes at the first and the last step. */
  first_bytes: number;
  last_bytes: number;
} {
  const depth = branch.depth as number;
  // Both only on branches from before issue 22 (`BranchRecord.vars`).
  const vars = (branch.vars ?? {}) as Record<string, unknown>;
  const varDepth = (branch.var_depth ?? {}) as Record<string, number>;
  const at = (d: number) => {
    // Since issue 22 the values live on their commits: `vars` holds only values
    // kept from before, and `var_depth` names every variable.
    const names = Object.keys(varDepth).filter((name) => (varDepth[name] ?? 0) <= d);
    return itemSize({
      ...branch,
      vars: Object.fromEntries(names.filter((n) => n in vars).map((n) => [n, vars[n]])),
      var_depth: Object.fromEntries(names.map((n) => [n, varDepth[n]])),
    });
  };
  const sizes = Array.from({ length: depth + 1 }, (_, d) => at(d));
  let written = 0;
  let read = 0;
  for (let d = 1; d <= depth; d++) {
    written += units(Math.max(sizes[d - 1]!, sizes[d]!), 1024);
    read += units(sizes[d - 1]!, 4096);
  }
  return {
    write_units: depth > 0 ? written / depth : 0,
    read_units: depth > 0 ? read / depth : 0,
    first_bytes: sizes[0] ?? 0,
    last_bytes: sizes.at(-1) ?? 0,
  };
}

/**
 * The labelled rows of the PC chart: every PC up to ten (so 1 is never skipped,
 * and none is drawn twice), beyond that about five whole, evenly spaced values
 * from 0 to the largest.
 *
 * @example
 * pcTicks(3) // [0, 1, 2, 3]
 * pcTicks(40) // [0, 10, 20, 30, 40]
 */
export function pcTicks(maxPc: number): number[] {
  const top = Math.max(1, Math.ceil(maxPc));
  if (top <= 10) return Array.from({ length: top + 1 }, (_, i) => i);
  const step = Math.ceil(top / 4);
  const ticks: number[] = [];
  for (let pc = 0; pc < top; pc += step) ticks.push(pc);
  ticks.push(top);
  return ticks;
}

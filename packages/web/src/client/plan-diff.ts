/**
 * Two plans side by side: instructions paired by `seq_no` (the PC's unit), so a
 * rewritten step lines up with the step it replaced, and an inserted or dropped
 * step shows on one side only.
 */

export type PlanChange = "same" | "changed" | "added" | "removed";

export interface PlanPair {
  /** The instruction's seq_no, or its position as `#i` when it has none. */
  key: string;
  seq_no: number | null;
  left: unknown;
  right: unknown;
  change: PlanChange;
}

const keyOf = (instruction: unknown, index: number): string => {
  const seq = (instruction as { seq_no?: unknown } | null)?.seq_no;
  return typeof seq === "number" ? String(seq) : `#${index}`;
};

/** JSON with sorted keys, so that key order is not a change. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * Pairs the instructions of `left` (before) and `right` (after) in the order of
 * `right`, with instructions only in `left` placed where they stood.
 *
 * @example
 * alignPlans([{seq_no: 0, ...}, {seq_no: 1, ...}], [{seq_no: 0, ...}, {seq_no: 2, ...}])
 * // [{key: "0", change: "same"}, {key: "1", change: "removed"}, {key: "2", change: "added"}]
 */
export function alignPlans(left: readonly unknown[], right: readonly unknown[]): PlanPair[] {
  const leftKeys = left.map(keyOf);
  const rightKeys = right.map(keyOf);
  const leftAt = new Map(leftKeys.map((k, i) => [k, i]));
  const rightSet = new Set(rightKeys);
  const used = new Set<number>();
  const out: PlanPair[] = [];
  const pair = (key: string, l: unknown, r: unknown): PlanPair => ({
    key,
    seq_no: key.startsWith("#") ? null : Number(key),
    left: l,
    right: r,
    change:
      l === undefined
        ? "added"
        : r === undefined
          ? "removed"
          : canonical(l) === canonical(r)
            ? "same"
            : "changed",
  });

  let i = 0;
  for (let j = 0; j < right.length; j++) {
    // Steps dropped from the left before this point keep their place.
    while (i < left.length && (used.has(i) || !rightSet.has(leftKeys[i]!))) {
      if (!used.has(i)) out.push(pair(leftKeys[i]!, left[i], undefined));
      i++;
    }
    const key = rightKeys[j]!;
    const li = leftAt.get(key);
    if (li === undefined || used.has(li)) {
      out.push(pair(key, undefined, right[j]));
    } else {
      used.add(li);
      out.push(pair(key, left[li], right[j]));
      if (li === i) i++;
    }
  }
  for (; i < left.length; i++) if (!used.has(i)) out.push(pair(leftKeys[i]!, left[i], undefined));
  return out;
}

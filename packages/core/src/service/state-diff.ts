/**
 * The difference between two states of a task (`GET .../commits/{id}/diff`):
 * the variables added, removed and changed, whether the plan changed, and where
 * each state's program counter stands. Values are read only where they may differ.
 */
import type { Diff } from "../model";
import type { TaskStore } from "../store/task-store";
import { type StoredState, stateValues } from "../vm/state";
import type { Presenter } from "./present";
import { stableJson } from "./stable-json";

/** The state before the first commit: nothing held, no plan. */
const EMPTY = {
  locations: {} as Record<string, string>,
  held: {} as Record<string, unknown>,
  plan: null,
  pc: null,
  commit: null,
};

/** The difference from `base` (null: the state before the first commit) to `to`, as clients see it. */
export async function diffStates(
  deps: { store: TaskStore; presenter: Presenter },
  tenant: string,
  taskId: string,
  to: StoredState,
  base: StoredState | null,
): Promise<Diff> {
  const from = base ?? EMPTY;
  // A name whose value lives on the same commit in both states did not change:
  // only the values that may differ are read.
  const where = (st: Pick<StoredState, "locations" | "held">) => [
    ...Object.keys(st.locations),
    ...Object.keys(st.held),
  ];
  const same = (name: string) =>
    Object.hasOwn(to.locations, name) && to.locations[name] === from.locations[name];
  const [toVariables, fromVariables] = await Promise.all([
    stateValues(
      deps.store,
      to,
      where(to).filter((n) => !same(n)),
    ),
    from.commit === null
      ? ({} as Record<string, unknown>)
      : stateValues(
          deps.store,
          from as StoredState,
          where(from).filter((n) => !same(n)),
        ),
  ]);
  const variableNames = new Set(where(from));
  const diff: Diff = {
    added: {},
    removed: {},
    changed: {},
    // One plan commit is one plan: no need to compare them.
    plan_changed:
      from.commit?.plan_commit !== to.commit.plan_commit &&
      stableJson(from.plan) !== stableJson(to.plan),
    pc: { from: from.pc, to: to.pc },
  };
  for (const [name, value] of Object.entries(toVariables)) {
    if (!variableNames.has(name)) diff.added[name] = value;
    else if (stableJson(fromVariables[name]) !== stableJson(value)) {
      diff.changed[name] = { from: fromVariables[name], to: value };
    }
  }
  const toNames = new Set(where(to));
  for (const [name, value] of Object.entries(fromVariables)) {
    if (!toNames.has(name)) diff.removed[name] = value;
  }
  const show = (values: Record<string, unknown>) => deps.presenter.values(values, tenant, taskId);
  const changed: Diff["changed"] = {};
  for (const [name, { from, to }] of Object.entries(diff.changed)) {
    const shown = await show({ from, to });
    changed[name] = { from: shown.from, to: shown.to };
  }
  return {
    ...diff,
    added: await show(diff.added),
    removed: await show(diff.removed),
    changed,
  };
}

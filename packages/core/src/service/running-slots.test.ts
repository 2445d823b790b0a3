import { describe, expect, it } from "vitest";
import type { Item, ItemStore } from "../ports/item-store";
import { SlotStore } from "../store/slot-store";
import { TaskStore } from "../store/task-store";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { MemoryQueue } from "../testing/memory/memory-queue";
import { ManualClock } from "../testing/memory-system";
import { RunningSlots } from "./running-slots";

/** An item store that counts its calls and the items they read. */
function metered(inner: ItemStore) {
  const meter = { calls: 0, itemsRead: 0 };
  const read = (items: Array<Item | null>) => {
    meter.itemsRead += items.filter((item) => item !== null).length;
  };
  const store: ItemStore = {
    get: async (key) => {
      meter.calls++;
      const item = await inner.get(key);
      read([item]);
      return item;
    },
    batchGet: async (keys) => {
      meter.calls++;
      const items = await inner.batchGet(keys);
      read(items);
      return items;
    },
    put: async (item, condition) => {
      meter.calls++;
      await inner.put(item, condition);
    },
    update: async (key, changes, condition) => {
      meter.calls++;
      return inner.update(key, changes, condition);
    },
    delete: async (key, condition) => {
      meter.calls++;
      await inner.delete(key, condition);
    },
    deleteMany: async (keys) => {
      meter.calls++;
      await inner.deleteMany(keys);
    },
    query: async (query) => {
      meter.calls++;
      const page = await inner.query(query);
      read(page.items);
      return page;
    },
  };
  return { store, meter };
}

function slotsOf(limit: number) {
  const clock = new ManualClock();
  const { store: items, meter } = metered(new MemoryItemStore());
  const slots = new RunningSlots({
    slots: new SlotStore(items),
    store: new TaskStore(items),
    queue: new MemoryQueue({ clock }),
    clock,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    limit: async () => limit,
  });
  return { slots, meter };
}

describe("RunningSlots", () => {
  it("claims up to the limit, answers true for a task that holds one, and frees", async () => {
    const { slots } = slotsOf(2);
    expect(await slots.claim("t", "a")).toBe(true);
    expect(await slots.claim("t", "a")).toBe(true);
    expect(await slots.claim("t", "b")).toBe(true);
    expect(await slots.claim("t", "c")).toBe(false);
    await slots.release("t", "a");
    await slots.release("t", "a");
    expect(await slots.claim("t", "c")).toBe(true);
    expect(await slots.claim("t", "d")).toBe(false);
    // Another tenant has slots of its own.
    expect(await slots.claim("u", "d")).toBe(true);
  });

  it("never lets more tasks run than the limit when claims race", async () => {
    const { slots } = slotsOf(5);
    const claimed = await Promise.all(
      Array.from({ length: 40 }, (_, i) => slots.claim("t", `task${i}`)),
    );
    expect(claimed.filter(Boolean)).toHaveLength(5);
  });

  it("claims and frees with a constant number of store calls and items read, however many run", async () => {
    const { slots, meter } = slotsOf(1000);
    for (let i = 0; i < 500; i++) await slots.claim("t", `running${i}`);
    meter.calls = 0;
    meter.itemsRead = 0;
    expect(await slots.claim("t", "new")).toBe(true);
    expect(meter).toEqual({ calls: 1, itemsRead: 0 });
    meter.calls = 0;
    // A release: read the holders, free, then look for one waiting task.
    await slots.release("t", "new");
    expect(meter.calls).toBeLessThanOrEqual(3);
    expect(meter.itemsRead).toBeLessThanOrEqual(1);
  });
});

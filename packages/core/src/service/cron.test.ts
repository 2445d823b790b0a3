import { describe, expect, it } from "vitest";
import { nextRunAt, parseCron } from "./cron";

const next = async (cron: string, zone: string, after: string) =>
  (await nextRunAt(cron, zone, new Date(after))).toISOString();

describe("nextRunAt", () => {
  it.each([
    // Winter time (CET, UTC+1), then summer time (CEST, UTC+2) after 29 March 2026.
    ["2026-03-28T00:00:00Z", "2026-03-28T08:00:00.000Z"],
    ["2026-03-28T08:00:00Z", "2026-03-29T07:00:00.000Z"],
    // Back to winter time after 25 October 2026.
    ["2026-10-24T12:00:00Z", "2026-10-25T08:00:00.000Z"],
    ["2026-10-23T12:00:00Z", "2026-10-24T07:00:00.000Z"],
  ])("puts 09:00 Europe/Berlin after %s at %s UTC", async (after, expected) => {
    expect(await next("0 9 * * *", "Europe/Berlin", after)).toBe(expected);
  });

  it("answers the time strictly after the given one", async () => {
    expect(await next("*/15 * * * *", "UTC", "2026-01-01T10:15:00Z")).toBe(
      "2026-01-01T10:30:00.000Z",
    );
  });

  it("reads day names and ranges", async () => {
    // 2026-01-02 is a Friday: the next weekday 08:30 after Friday noon is Monday.
    expect(await next("30 8 * * MON-FRI", "UTC", "2026-01-02T12:00:00Z")).toBe(
      "2026-01-05T08:30:00.000Z",
    );
  });
});

describe("parseCron", () => {
  it("expands the days of week, Sunday as 0 or 7", async () => {
    expect((await parseCron("0 9 * * 1-5")).daysOfWeek).toEqual([1, 2, 3, 4, 5]);
    expect((await parseCron("0 9 * * 7")).daysOfWeek).toEqual([0]);
    expect((await parseCron("0 9 * * *")).daysOfWeek).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it.each([
    ["* * * *", /has 4 field/],
    ["0 0 9 * * *", /has 6 field/],
    ["61 * * * *", /not a valid cron/],
    ["0 9 1 * MON", /both day-of-month and day-of-week/],
    ["0 9 L * *", /not a valid cron|may only use/],
    ["0 9 * * 1#2", /may only use/],
  ])("refuses '%s' with a 422 that says why", async (cron, message) => {
    await expect(parseCron(cron)).rejects.toThrow(message);
    await expect(parseCron(cron)).rejects.toThrow(expect.objectContaining({ kind: "invalid" }));
  });
});

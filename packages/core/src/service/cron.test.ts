import { describe, expect, it } from "vitest";
import { nextRunAt, parseCron } from "./cron";

const next = (cron: string, zone: string, after: string) =>
  nextRunAt(cron, zone, new Date(after)).toISOString();

describe("nextRunAt", () => {
  it.each([
    // Winter time (CET, UTC+1), then summer time (CEST, UTC+2) after 29 March 2026.
    ["2026-03-28T00:00:00Z", "2026-03-28T08:00:00.000Z"],
    ["2026-03-28T08:00:00Z", "2026-03-29T07:00:00.000Z"],
    // Back to winter time after 25 October 2026.
    ["2026-10-24T12:00:00Z", "2026-10-25T08:00:00.000Z"],
    ["2026-10-23T12:00:00Z", "2026-10-24T07:00:00.000Z"],
  ])("puts 09:00 Europe/Berlin after %s at %s UTC", (after, expected) => {
    expect(next("0 9 * * *", "Europe/Berlin", after)).toBe(expected);
  });

  it("answers the time strictly after the given one", () => {
    expect(next("*/15 * * * *", "UTC", "2026-01-01T10:15:00Z")).toBe("2026-01-01T10:30:00.000Z");
  });

  it("reads day names and ranges", () => {
    // 2026-01-02 is a Friday: the next weekday 08:30 after Friday noon is Monday.
    expect(next("30 8 * * MON-FRI", "UTC", "2026-01-02T12:00:00Z")).toBe(
      "2026-01-05T08:30:00.000Z",
    );
  });
});

describe("parseCron", () => {
  it("expands the days of week, Sunday as 0 or 7", () => {
    expect(parseCron("0 9 * * 1-5").daysOfWeek).toEqual([1, 2, 3, 4, 5]);
    expect(parseCron("0 9 * * 7").daysOfWeek).toEqual([0]);
    expect(parseCron("0 9 * * *").daysOfWeek).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it.each([
    ["* * * *", /has 4 field/],
    ["0 0 9 * * *", /has 6 field/],
    ["61 * * * *", /not a valid cron/],
    ["0 9 1 * MON", /both day-of-month and day-of-week/],
    ["0 9 L * *", /not a valid cron|may only use/],
    ["0 9 * * 1#2", /may only use/],
  ])("refuses '%s' with a 422 that says why", (cron, message) => {
    expect(() => parseCron(cron)).toThrow(message);
    expect(() => parseCron(cron)).toThrow(expect.objectContaining({ kind: "invalid" }));
  });
});

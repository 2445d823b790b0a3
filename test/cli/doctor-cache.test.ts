/**
 * `stackvm doctor` (and `GET /v1/doctor`) say when the server's checks are an
 * earlier run's given again, and how old: the server runs them at most once a
 * minute (the LLM check bills the operator), and an answer up to a minute old
 * was shown as if new.
 */
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";
import { runCli } from "./run-cli";

// The doctor's own cache, as npm start has it (a minute).
const t = useTestStack({});
const cli = (args: string[]) =>
  runCli(args, { STACKVM_URL: t.url, STACKVM_API_KEY: t.apiKey, PORT: undefined });

describe("the doctor's cached answer", () => {
  it("says a first run is new, then that the next answer is that run's, how old, with no second LLM call", async () => {
    t.llm.on("text", "ok");
    const first = await cli(["doctor", "--json"]);
    expect(first.stderr).toBe("");
    const fresh = JSON.parse(first.stdout);
    expect(fresh).toMatchObject({ cached: false, age_seconds: 0 });
    expect(Date.parse(fresh.checked_at)).not.toBeNaN();
    const calls = t.llm.requests.length;
    expect(calls).toBeGreaterThan(0);

    const again = await cli(["doctor"]);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toMatch(
      /the server's checks above are \d+ s old \(run at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\), given again: it runs them at most once a minute/,
    );
    expect(t.llm.requests.length).toBe(calls);

    const api = await t.api("GET", "/v1/doctor");
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({ cached: true, checked_at: fresh.checked_at });
    expect(api.body.age_seconds).toBeGreaterThanOrEqual(0);
    expect(api.body.age_seconds).toBeLessThan(60);
  });

  it("shows no such line for checks made for the request", async () => {
    // A stack whose doctor never reuses an answer is the CLI test's (cli-branches);
    // here the line's absence is read from a fresh answer's fields.
    const { freshnessLine } = await import("../../packages/cli/src/commands/doctor");
    expect(
      freshnessLine({ checked_at: "2026-03-01T09:00:00.000Z", cached: false, age_seconds: 0 }),
    ).toBeNull();
    expect(
      freshnessLine({ checked_at: "2026-03-01T09:00:00.000Z", cached: true, age_seconds: 42 }),
    ).toBe(
      "the server's checks above are 42 s old (run at 2026-03-01 09:00:00Z), given again: it runs them at most once a minute, so ask again after that for new ones",
    );
  });
});

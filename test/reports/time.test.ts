// Report time expressions: now (the end of the current second), relative offsets with snaps,
// month and year arithmetic at month ends and in leap years, absolute dates and timestamps, Unix
// seconds, and what is refused.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { addMonths, isoSeconds, parseTime, TimeExpressionError } from "../../src/core/reports/time.ts";

/** A clock reading inside the second that ends at `iso`: `now` resolves to `iso`. */
const within = (iso: string) => new Date(Date.parse(iso) - 500);
/** Wednesday 2025-03-12 14:37:08.5 UTC: `now` is 14:37:09, the end of that second. */
const NOW = within("2025-03-12T14:37:09Z");
const at = (text: string, now = NOW) => isoSeconds(parseTime(text, now));

describe("time expressions", () => {
  test("now and relative offsets in every unit; the count defaults to 1", () => {
    assert.equal(at("now"), "2025-03-12T14:37:09Z");
    assert.equal(at("-4h"), "2025-03-12T10:37:09Z");
    assert.equal(at("-24h"), "2025-03-11T14:37:09Z");
    assert.equal(at("+1h"), "2025-03-12T15:37:09Z");
    assert.equal(at("-30s"), "2025-03-12T14:36:39Z");
    assert.equal(at("-15m"), "2025-03-12T14:22:09Z");
    assert.equal(at("-2d"), "2025-03-10T14:37:09Z");
    assert.equal(at("-1w"), "2025-03-05T14:37:09Z");
    assert.equal(at("-h"), "2025-03-12T13:37:09Z");
    assert.equal(at("-0d"), "2025-03-12T14:37:09Z");
    assert.equal(at("-1mon"), "2025-02-12T14:37:09Z");
    assert.equal(at("-1y"), "2024-03-12T14:37:09Z");
    assert.equal(at("  -4h  "), "2025-03-12T10:37:09Z", "surrounding blanks are ignored");
  });

  test("now is the end of the current second, wherever in it the clock is", () => {
    for (const clock of ["2025-03-12T14:37:09.000Z", "2025-03-12T14:37:09.999Z"]) {
      const now = new Date(clock);
      assert.equal(at("now", now), "2025-03-12T14:37:10Z", clock);
      assert.equal(at("-4h", now), "2025-03-12T10:37:10Z", `${clock}: -4h to now is 4 hours`);
      assert.equal(at("+0s", now), "2025-03-12T14:37:10Z", clock);
      assert.equal(at("@s", now), "2025-03-12T14:37:09Z", `${clock}: @s is the second's start`);
    }
    // In the day's last second, now is midnight but the snaps still name today.
    const late = new Date("2025-03-12T23:59:59.999Z");
    assert.equal(at("now", late), "2025-03-13T00:00:00Z");
    assert.equal(at("@d", late), "2025-03-12T00:00:00Z");
    assert.equal(at("-1d@d", late), "2025-03-11T00:00:00Z");
    assert.equal(at("@mon", late), "2025-03-01T00:00:00Z");
    // Explicit times are exact, whatever the clock says.
    assert.equal(parseTime("1700000000", late), 1_700_000_000);
    assert.equal(at("2025-03-12T23:59:59Z", late), "2025-03-12T23:59:59Z");
  });

  test("snaps go back to the start of the unit", () => {
    assert.equal(at("@s", new Date("2025-03-12T14:37:09.750Z")), "2025-03-12T14:37:09Z");
    assert.equal(at("@m"), "2025-03-12T14:37:00Z");
    assert.equal(at("@h"), "2025-03-12T14:00:00Z");
    assert.equal(at("-1d@d"), "2025-03-11T00:00:00Z");
    assert.equal(at("@d"), "2025-03-12T00:00:00Z");
    assert.equal(at("-1mon@mon"), "2025-02-01T00:00:00Z");
    assert.equal(at("@mon"), "2025-03-01T00:00:00Z");
    assert.equal(at("@y"), "2025-01-01T00:00:00Z");
    assert.equal(at("-1y@y"), "2024-01-01T00:00:00Z");
    assert.equal(at("-1d@d+8h"), "2025-03-11T08:00:00Z", "terms apply left to right");
  });

  test("week snaps: @w and @w0 are Sunday, @w1-@w6 Monday to Saturday, today counts", () => {
    // 2025-03-12 is a Wednesday.
    assert.equal(at("@w"), "2025-03-09T00:00:00Z");
    assert.equal(at("@w0"), "2025-03-09T00:00:00Z");
    assert.equal(at("@w1"), "2025-03-10T00:00:00Z");
    assert.equal(at("@w2"), "2025-03-11T00:00:00Z");
    assert.equal(at("@w3"), "2025-03-12T00:00:00Z", "the same weekday snaps to today's start");
    assert.equal(at("@w4"), "2025-03-06T00:00:00Z");
    assert.equal(at("@w5"), "2025-03-07T00:00:00Z");
    assert.equal(at("@w6"), "2025-03-08T00:00:00Z");
    assert.equal(at("-7d@w0"), "2025-03-02T00:00:00Z");
    assert.equal(at("-7d@w1"), "2025-03-03T00:00:00Z");
  });

  test("months and years clamp the day to the target month's end, leap years included", () => {
    const mar31 = within("2025-03-31T10:00:00Z");
    assert.equal(at("-1mon", mar31), "2025-02-28T10:00:00Z");
    assert.equal(at("-1mon", within("2024-03-31T10:00:00Z")), "2024-02-29T10:00:00Z", "leap year");
    assert.equal(at("-2mon", mar31), "2025-01-31T10:00:00Z");
    assert.equal(at("-13mon", mar31), "2024-02-29T10:00:00Z");
    assert.equal(at("+1mon", within("2025-01-31T10:00:00Z")), "2025-02-28T10:00:00Z");
    assert.equal(at("+1mon", within("2025-12-15T10:00:00Z")), "2026-01-15T10:00:00Z", "over the year");
    assert.equal(at("-1mon", within("2025-01-15T10:00:00Z")), "2024-12-15T10:00:00Z");
    assert.equal(at("-1mon", within("2025-05-31T10:00:00Z")), "2025-04-30T10:00:00Z");
    const feb29 = within("2024-02-29T12:00:00Z");
    assert.equal(at("+1y", feb29), "2025-02-28T12:00:00Z");
    assert.equal(at("-1y", feb29), "2023-02-28T12:00:00Z");
    assert.equal(at("+4y", feb29), "2028-02-29T12:00:00Z");
    assert.equal(at("-1mon@mon", mar31), "2025-02-01T00:00:00Z");
    assert.equal(addMonths(new Date("2025-08-31T00:00:00Z"), -6).toISOString(), "2025-02-28T00:00:00.000Z");
  });

  test("absolute dates, timestamps and Unix seconds", () => {
    assert.equal(at("2025-01-02"), "2025-01-02T00:00:00Z");
    assert.equal(at("2024-02-29"), "2024-02-29T00:00:00Z");
    assert.equal(at("2025-01-02T03:04:05Z"), "2025-01-02T03:04:05Z");
    assert.equal(at("2025-01-02T03:04:05.999Z"), "2025-01-02T03:04:05Z", "fractions are dropped");
    assert.equal(at("2025-01-02T03:04:05+02:00"), "2025-01-02T01:04:05Z");
    assert.equal(at("2025-01-02T03:04:05-01:30"), "2025-01-02T04:34:05Z");
    assert.equal(parseTime("1700000000", NOW), 1_700_000_000);
    assert.equal(parseTime("0", NOW), 0);
    assert.equal(at("1700000000"), "2023-11-14T22:13:20Z");
  });

  test("anything else is refused with a sentence listing the accepted forms", () => {
    for (const bad of [
      "",
      "yesterday",
      "4h",
      "-4",
      "-4x",
      "-1month",
      "-1d@q",
      "@w7",
      "-1d@",
      "--1d",
      "2025-02-30",
      "2025-13-01",
      "2023-02-29",
      "2025-1-2",
      "2025-01-02T24:00:00Z",
      "2025-01-02T03:04:05",
      "2025-01-02 03:04:05",
      "2025-01-02T03:04:60Z",
      "-1.5h",
      "now-1h",
      "NOW",
    ]) {
      assert.throws(
        () => parseTime(bad, NOW),
        (error: unknown) =>
          error instanceof TimeExpressionError &&
          /is not a time expression; use now; a relative time/.test(error.message),
        bad,
      );
    }
  });

  test("times outside 1970 to 9999 are refused", () => {
    for (const bad of ["-60y", "+8000y", "999999999999", "-999999999y"]) {
      assert.throws(() => parseTime(bad, NOW), TimeExpressionError, bad);
    }
    assert.equal(at("9999-12-31T23:59:59Z"), "9999-12-31T23:59:59Z");
    assert.equal(at("1970-01-01"), "1970-01-01T00:00:00Z");
  });

  test("isoSeconds formats any second, across day boundaries", () => {
    for (const s of [0, 59, 86_399, 86_400, 951_782_400, 1_709_164_799, 1_709_164_800, 253_402_300_799]) {
      assert.equal(isoSeconds(s), `${new Date(s * 1000).toISOString().slice(0, 19)}Z`);
    }
  });
});

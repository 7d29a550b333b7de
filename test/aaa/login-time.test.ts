// Login-Time (rlm_logintime): the reading of timestr.c on a known clock and in a named time zone,
// and the strings FreeRADIUS would not read as written refused by the API (400, nothing stored).
// The verdicts on the wire against FreeRADIUS 3.2 are in test/radius/parity.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { loginTimeLeft } from "../../src/core/aaa/login-time.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/** Monday 2030-01-07 09:30:05 UTC. */
const MONDAY = Date.UTC(2030, 0, 7, 9, 30, 5) / 1000;

test("time left: the end minute counts, windows run on over midnight and the week's end", () => {
  const cases: [string, number][] = [
    ["Wk0900-1700", (17 * 60 - 570 + 1) * 60],
    ["Sa1000-1400", -1],
    ["Any", 0],
    ["Al0000-2400", 0],
    ["Mo0900-2359,Tu0000-0100", (1440 - 570 + 61) * 60],
    ["Su-Mo0000-2400", (1440 - 570) * 60],
    ["Fr-Mo", (1440 - 570) * 60],
    ["0800-0929", -1],
    ["MoWe0930-0930", 60],
  ];
  for (const [window, left] of cases) assert.equal(loginTimeLeft(window, MONDAY, "UTC"), left, window);
  // The same instant is Monday 18:30 in Tokyo (UTC+9): outside Wk0900-1700 there.
  assert.equal(loginTimeLeft("Wk0900-1700", MONDAY, "Asia/Tokyo"), -1);
  assert.equal(loginTimeLeft("Mo1800-1900", MONDAY, "Asia/Tokyo"), (1140 - 1110 + 1) * 60);
});

for (const { dialect, skip } of await dialects()) {
  describe(`Login-Time values through the API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    before(async () => {
      server = await startTestServer({ dialect });
      key = await server.key("default");
    });
    after(() => server?.stop());

    test("strings FreeRADIUS would misread are refused with the field's reason; good ones stored", async () => {
      const user = await server.call("POST", "/api/users", { key, body: { username: "lt-api" } });
      const add = (value: string) =>
        server.call("POST", "/api/attributes", {
          key,
          body: { userid: user.body.id, table: "radcheck", attribute: "Login-Time", operator: ":=", value },
        });
      const refused: [string, RegExp][] = [
        ["Wk0900-1799", /not a time range/],
        ["Mo-Wk0900-1700", /must end in Su/],
        ["Wk-Mo", /cannot start a day range/],
        ["Wk0900-1700, Sa1000-1400", /spaces/],
        ["Wk0900", /HHMM-HHMM/],
        ["Wk0900-1700,", /empty part/],
        ["Xy0900-1700", /days/],
      ];
      for (const [value, why] of refused) {
        const res = await add(value);
        assert.equal(res.status, 400, `${value}: ${res.text}`);
        const detail = res.body.details?.find((d: { field: string }) => d.field === "value");
        assert.match(detail?.message ?? "", why, `${value}: ${res.text}`);
      }
      const rows = () =>
        server.core.database.db
          .selectFrom("radcheck")
          .select("value")
          .where("username", "=", "lt-api")
          .execute();
      assert.deepEqual(await rows(), []);
      for (const value of [
        "Wk0900-1700,Sa1000-1400",
        "Al0800-2000",
        "Any",
        "Mo-Fr|Su2200-0600",
        "0800-2400",
      ]) {
        const res = await add(value);
        assert.equal(res.status, 201, `${value}: ${res.text}`);
        await server.call("DELETE", `/api/attributes/${res.body.id}?table=radcheck`, { key });
      }
    });
  });
}

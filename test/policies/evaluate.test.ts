// The pure parts of policies: conditions and outcomes checked, first match, local time in a zone,
// how an outcome combines with the reply items, and which rules are unreachable.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Pair } from "../../src/core/aaa/pairs.ts";
import { analyse } from "../../src/core/policies/analysis.ts";
import {
  compile,
  defaultRule,
  evaluate,
  localTime,
  type PolicyFacts,
  type PolicyRule,
} from "../../src/core/policies/evaluate.ts";
import { combine, outcomePairs } from "../../src/core/policies/reply.ts";
import { checkConditions, checkOutcome, timeZoneProblem } from "../../src/core/policies/rules.ts";
import type { FieldProblem } from "../../src/core/shared/errors.ts";

const facts = (over: Partial<PolicyFacts> = {}): PolicyFacts => ({
  networkId: 1,
  ssid: "Staff",
  nasIdentifier: "ap-1",
  groupIds: [],
  method: "PAP",
  portalMethod: null,
  day: "mon",
  minute: 9 * 60,
  deviceRegistered: false,
  ...over,
});

const rule = (
  id: number,
  conditions: PolicyRule["conditions"],
  outcome: PolicyRule["outcome"] = { action: "accept" },
) => compile({ id, name: `r${id}`, position: id, conditions, outcome });

test("conditions: every given one must hold, any listed value matches; first match wins", () => {
  const rules = [
    rule(1, { ssids: ["Guest*"], methods: ["PAP"] }),
    rule(2, { nas_identifiers: ["ap-?"], days: ["mon", "tue"], times: ["08:00-17:00"] }),
    defaultRule({ action: "reject", reason: "no" }, 3),
  ];
  const ex = evaluate(rules, facts(), true);
  assert.equal(ex.rule.id, 2);
  assert.deepEqual(
    ex.misses?.map((m) => [m.rule.id, m.miss.condition, m.miss.actual]),
    [[1, "ssids", "Staff"]],
  );
  assert.equal(evaluate(rules, facts({ ssid: "Guest-5G" })).rule.id, 1);
  assert.equal(evaluate(rules, facts({ ssid: "guest" })).rule.id, 2, "SSIDs are case-sensitive");
  assert.equal(evaluate(rules, facts({ minute: 17 * 60 })).rule.id, null, "the end of a range is excluded");
  assert.equal(evaluate(rules, facts({ day: "wed" })).rule.id, null);
  assert.equal(evaluate(rules, facts({ nasIdentifier: "ap-10" })).rule.id, null);
  assert.equal(
    evaluate(rules, facts({ nasIdentifier: null })).rule.id,
    null,
    "an absent fact fails the condition",
  );
});

test("time ranges over midnight, groups, device, portal method, networks", () => {
  const rules = [
    rule(1, { times: ["22:00-06:00"] }),
    rule(2, { groups: [7, 8] }),
    rule(3, { device: "registered" }),
    rule(4, { portal_methods: ["voucher"] }),
    rule(5, { networks: [9] }),
    defaultRule({ action: "accept" }, 6),
  ];
  assert.equal(evaluate(rules, facts({ minute: 23 * 60 })).rule.id, 1);
  assert.equal(evaluate(rules, facts({ minute: 5 * 60 + 59 })).rule.id, 1);
  assert.equal(evaluate(rules, facts({ minute: 6 * 60 })).rule.id, null);
  assert.equal(evaluate(rules, facts({ groupIds: [3, 8] })).rule.id, 2);
  assert.equal(evaluate(rules, facts({ deviceRegistered: true })).rule.id, 3);
  assert.equal(evaluate(rules, facts({ portalMethod: "voucher" })).rule.id, 4);
  assert.equal(evaluate(rules, facts({ portalMethod: "password" })).rule.id, null);
  assert.equal(evaluate(rules, facts({ networkId: 9 })).rule.id, 5);
});

test("local time: weekday and minute in the zone, across a date line", () => {
  // 2024-01-01T23:30:00Z is a Monday in UTC and Tuesday 08:30 in Tokyo.
  const t = Date.UTC(2024, 0, 1, 23, 30) / 1000;
  assert.deepEqual([localTime(t, "UTC").day, localTime(t, "UTC").minute], ["mon", 23 * 60 + 30]);
  assert.deepEqual([localTime(t, "Asia/Tokyo").day, localTime(t, "Asia/Tokyo").minute], ["tue", 8 * 60 + 30]);
  assert.equal(localTime(t, "America/New_York").minute, 18 * 60 + 30);
  assert.equal(timeZoneProblem("Europe/Paris"), null);
  assert.match(timeZoneProblem("Mars/Olympus") ?? "", /IANA/);
});

test("bad conditions and outcomes are refused with the field named", () => {
  const problems: FieldProblem[] = [];
  checkConditions({ networks: [], times: ["25:00-01:00"], days: ["monday"], colour: ["red"] }, problems);
  checkOutcome({ action: "accept", vlan: 4095, reason: "x" }, problems);
  checkOutcome({ action: "reject", vlan: 10 }, problems);
  assert.deepEqual(
    problems.map((p) => p.field).sort(),
    [
      "conditions.colour",
      "conditions.days",
      "conditions.networks",
      "conditions.times",
      "outcome.reason",
      "outcome.vlan",
      "outcome.vlan",
    ].sort(),
  );
  const ok: FieldProblem[] = [];
  assert.deepEqual(checkOutcome({ action: "accept", vlan: 4094 }, ok), { action: "accept", vlan: 4094 });
  assert.deepEqual(checkOutcome({ action: "accept", vlan: 1 }, ok), { action: "accept", vlan: 1 });
  assert.equal(ok.length, 0);
});

test("combination: the policy's attributes replace same-named items; Session-Timeout keeps the smaller", () => {
  const reply: Pair[] = [
    { attribute: "Tunnel-Private-Group-Id", op: "=", value: "99" },
    { attribute: "Tunnel-Type:2", op: "=", value: "VLAN" },
    { attribute: "Filter-Id", op: "=", value: "user-filter" },
    { attribute: "Reply-Message", op: "=", value: "hello" },
    { attribute: "Session-Timeout", op: "=", value: "600" },
    { attribute: "Idle-Timeout", op: "=", value: "60" },
  ];
  const out = combine(
    reply,
    outcomePairs({
      action: "accept",
      vlan: 10,
      filter_id: "staff",
      session_timeout: 3600,
      idle_timeout: 300,
    }),
  );
  const show = (pairs: Pair[]) => pairs.map((p) => `${p.attribute}=${p.value}`).sort();
  assert.deepEqual(show(out), [
    "Filter-Id=staff",
    "Idle-Timeout=300",
    "Reply-Message=hello",
    "Session-Timeout=600",
    "Tunnel-Medium-Type:1=IEEE-802",
    "Tunnel-Private-Group-Id:1=10",
    "Tunnel-Type:1=VLAN",
  ]);
  const shorter = combine(reply, outcomePairs({ action: "accept", session_timeout: 120 }));
  assert.ok(show(shorter).includes("Session-Timeout=120"));
  // A plan's attributes come first; the policy's own override them.
  const plan: Pair[] = [
    { attribute: "Filter-Id", op: "=", value: "plan" },
    { attribute: "Mikrotik-Rate-Limit", op: "=", value: "5M/5M" },
  ];
  assert.deepEqual(show(outcomePairs({ action: "accept", filter_id: "own" }, plan)), [
    "Filter-Id=own",
    "Mikrotik-Rate-Limit=5M/5M",
  ]);
});

test("analysis: a rule with a subset of wider conditions shadows a later one; overlaps are said", () => {
  const rules: PolicyRule[] = [
    {
      id: 1,
      name: "staff ssid",
      position: 1,
      conditions: { ssids: ["Staff*"] },
      outcome: { action: "accept", vlan: 10 },
    },
    {
      id: 2,
      name: "staff ssid at night",
      position: 2,
      conditions: { ssids: ["Staff-5G"], times: ["22:00-06:00"] },
      outcome: { action: "reject", reason: "closed" },
    },
    {
      id: 3,
      name: "nights",
      position: 3,
      conditions: { times: ["23:00-05:00"] },
      outcome: { action: "reject", reason: "closed" },
    },
    { id: 4, name: "all", position: 4, conditions: {}, outcome: { action: "accept", vlan: 30 } },
    { id: null, name: "default", position: 5, conditions: {}, outcome: { action: "accept" } },
  ];
  const warnings = analyse(rules);
  const unreachable = warnings
    .filter((w) => w.kind === "unreachable")
    .map((w) => [w.policy_id, w.earlier_id]);
  assert.deepEqual(unreachable, [
    [2, 1],
    [null, 4],
  ]);
  assert.match(warnings.find((w) => w.policy_id === 2)!.message, /subset/);
  const overlaps = warnings.filter((w) => w.kind === "overlap").map((w) => [w.policy_id, w.earlier_id]);
  assert.deepEqual(overlaps, [
    [3, 1],
    [4, 1],
    [4, 3],
  ]);
});

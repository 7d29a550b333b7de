// Warnings about a policy list, shown with it (never refused: the operator may mean it). A rule is
// unreachable when an earlier one matches every request it matches (the earlier one's conditions
// are each as wide or wider: a subset of the conditions, with wider values); two rules overlap when
// some request could match both and their outcomes differ (the earlier one wins).
import { conditionKeysOf, globToRegExp, isGlob, minuteRanges, type PolicyRule } from "./evaluate.ts";
import type { ConditionKey, PolicyConditions } from "./rules.ts";

export interface PolicyWarning {
  /** The rule warned about (null: the default rule). */
  policy_id: number | null;
  kind: "unreachable" | "overlap";
  /** The earlier rule that causes it. */
  earlier_id: number;
  earlier_name: string;
  message: string;
}

function minuteSet(times: readonly string[]): Uint8Array {
  const set = new Uint8Array(1440);
  for (const [from, to] of minuteRanges(times)) set.fill(1, from, to);
  return set;
}

function textCovered(wide: readonly string[], narrow: readonly string[]): boolean {
  return narrow.every((v) =>
    isGlob(v) ? wide.includes(v) || wide.includes("*") : wide.some((w) => globToRegExp(w).test(v)),
  );
}

function textMeets(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) =>
    b.some((y) => x === y || (isGlob(x) && isGlob(y)) || globToRegExp(x).test(y) || globToRegExp(y).test(x)),
  );
}

/** Whether every value `narrow` allows for condition `key`, `wide` allows too. */
function covers(key: ConditionKey, wide: PolicyConditions, narrow: PolicyConditions): boolean {
  if (key === "device") return wide.device === narrow.device;
  if (key === "times") {
    const w = minuteSet(wide.times!);
    return minuteSet(narrow.times!).every((on, i) => !on || w[i] === 1);
  }
  if (key === "ssids" || key === "nas_identifiers") return textCovered(wide[key]!, narrow[key]!);
  const w = wide[key] as readonly unknown[];
  return (narrow[key] as readonly unknown[]).every((v) => w.includes(v));
}

/** Whether some value is allowed by both for condition `key`. */
function meets(key: ConditionKey, a: PolicyConditions, b: PolicyConditions): boolean {
  if (key === "device") return a.device === b.device;
  if (key === "times") {
    const x = minuteSet(a.times!);
    return minuteSet(b.times!).some((on, i) => on === 1 && x[i] === 1);
  }
  if (key === "ssids" || key === "nas_identifiers") return textMeets(a[key]!, b[key]!);
  const x = a[key] as readonly unknown[];
  return (b[key] as readonly unknown[]).some((v) => x.includes(v));
}

const describe = (rule: PolicyRule) => `policy ${rule.id} "${rule.name}" (position ${rule.position})`;

/** The warnings of a list in evaluation order; the default rule last (it has no conditions). */
export function analyse(rules: readonly PolicyRule[]): PolicyWarning[] {
  const warnings: PolicyWarning[] = [];
  // An unreachable rule decides nothing: it neither shadows nor overlaps the ones after it.
  const unreachable = new Set<number | null>();
  rules.forEach((later, j) => {
    const laterKeys = conditionKeysOf(later.conditions);
    for (const earlier of rules.slice(0, j)) {
      if (earlier.id === null || unreachable.has(earlier.id)) continue;
      const keys = conditionKeysOf(earlier.conditions);
      if (keys.every((k) => laterKeys.includes(k) && covers(k, earlier.conditions, later.conditions))) {
        const why =
          keys.length === 0
            ? "it has no conditions, so it matches every request"
            : `its conditions (${keys.join(", ")}) are a subset of this one's and at least as wide`;
        warnings.push({
          policy_id: later.id,
          kind: "unreachable",
          earlier_id: earlier.id,
          earlier_name: earlier.name,
          message: `unreachable: ${describe(earlier)} comes first and matches every request this one matches: ${why}`,
        });
        unreachable.add(later.id);
        break;
      }
      if (later.id === null) continue;
      const shared = keys.filter((k) => laterKeys.includes(k));
      const differ = JSON.stringify(earlier.outcome) !== JSON.stringify(later.outcome);
      if (differ && shared.every((k) => meets(k, earlier.conditions, later.conditions))) {
        warnings.push({
          policy_id: later.id,
          kind: "overlap",
          earlier_id: earlier.id,
          earlier_name: earlier.name,
          message: `overlaps ${describe(earlier)}: a request matching both gets that one's outcome${
            shared.length > 0 ? ` (both accept some of the same ${shared.join(", ")})` : ""
          }`,
        });
      }
    }
  });
  return warnings;
}

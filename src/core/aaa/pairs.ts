// Attribute-value pairs and the two FreeRADIUS operations the login decision is made of:
// comparing check items with a request (paircompare) and merging items into a list
// (radius_pairmove). Both follow FreeRADIUS 3.2, which is the reference.
import { parseIp } from "../shared/ip.ts";
import { sameOctets } from "../shared/secrets.ts";
import { parseAttributeName } from "./dictionary.ts";
import { integerValue } from "./values.ts";

export interface Pair {
  attribute: string;
  op: string;
  value: string;
  /**
   * The value's octets where text would not keep them: a request's User-Password, which may be
   * any octets (invalid UTF-8 decodes to U+FFFD, so different passwords would read the same).
   */
  raw?: Buffer | undefined;
}

/** FreeRADIUS's server-side check items that paircompare never compares with the request. */
const NEVER_COMPARED = new Set([
  "crypt-password",
  "auth-type",
  "autz-type",
  "acct-type",
  "session-type",
  "strip-user-name",
]);
const ASSIGNMENTS = new Set([":=", "+="]);

export type Comparator = (item: Pair) => boolean | undefined;

/** Orders two values of one attribute as FreeRADIUS does: numbers as numbers, the rest bytewise. */
export function compareValues(attribute: string, left: string, right: string): number {
  const def = parseAttributeName(attribute)?.def;
  if (def) {
    if (["integer", "byte", "short", "signed", "integer64", "date"].includes(def.type)) {
      const a = integerValue(def, left);
      const b = integerValue(def, right);
      if (a !== undefined && b !== undefined) return a < b ? -1 : a > b ? 1 : 0;
    }
    if (def.type === "ipaddr" || def.type === "ipv6addr") {
      // Addresses compare as their octets (FreeRADIUS's value_data_cmp), whatever their spelling.
      const family = def.type === "ipaddr" ? 4 : 6;
      const a = parseIp(left, family);
      const b = parseIp(right, family);
      if (a && b) return Buffer.compare(Buffer.from(a.toByteArray()), Buffer.from(b.toByteArray()));
    }
  }
  return Buffer.compare(Buffer.from(left), Buffer.from(right));
}

function matches(op: string, candidate: Pair, item: Pair): boolean {
  const requestValue = candidate.value;
  if (candidate.raw) {
    // Octets against the item's UTF-8 text; equality in constant time (it is a password).
    const known = Buffer.from(item.value, "utf8");
    if (op === "==" || op === "=") return sameOctets(candidate.raw, known);
    if (op === "!=") return !sameOctets(candidate.raw, known);
  }
  if (op === "=~" || op === "!~") {
    let found: boolean;
    try {
      found = new RegExp(item.value).test(requestValue);
    } catch {
      return false;
    }
    return op === "=~" ? found : !found;
  }
  const order = candidate.raw
    ? Buffer.compare(candidate.raw, Buffer.from(item.value, "utf8"))
    : compareValues(item.attribute, requestValue, item.value);
  switch (op) {
    case "!=":
      return order !== 0;
    case ">":
      return order > 0;
    case ">=":
      return order >= 0;
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case "=*":
      return true;
    default:
      // "==", and "=" which FreeRADIUS reverts to "==" in a check list.
      return order === 0;
  }
}

/**
 * paircompare: true when every comparison item matches the request. Assignments (:=, +=) always
 * match. `special` answers for attributes that are not in the request but computed by the server
 * (SQL-Group membership); it returns undefined for the others.
 */
export function compareCheckItems(
  request: readonly Pair[],
  items: readonly Pair[],
  special: Comparator,
): boolean {
  for (const item of items) {
    if (ASSIGNMENTS.has(item.op)) continue;
    const key = item.attribute.toLowerCase();
    if (NEVER_COMPARED.has(key)) continue;
    const computed = special(item);
    if (computed !== undefined) {
      if (!computed) return false;
      continue;
    }
    const candidates = request.filter((p) => p.attribute.toLowerCase() === key);
    // A User-Password check cannot be made when the request has none (CHAP): it is skipped.
    if (key === "user-password" && candidates.length === 0) continue;
    if (candidates.length === 0) {
      if (item.op === "!*") continue;
      return false;
    }
    if (item.op === "!*") return false;
    // Several instances in the request: one that matches is enough.
    if (!candidates.some((candidate) => matches(item.op, candidate, item))) return false;
  }
  return true;
}

/**
 * radius_pairmove: merges `from` into `to` by each item's operator. Operators look only at the
 * items `to` held before this merge: `=` adds when absent, `:=` overwrites the first instance
 * (or adds), `+=` always adds, `!*` deletes every instance, `==` keeps only equal instances.
 */
export function mergePairs(to: readonly Pair[], from: readonly Pair[]): Pair[] {
  const list: (Pair | null)[] = to.map((p) => ({ ...p }));
  const originalCount = list.length;
  const edited = new Array<boolean>(originalCount).fill(false);
  for (const item of from) {
    if (item.op === "+=") {
      list.push({ ...item, op: "=" });
      continue;
    }
    let found = false;
    let moved = false;
    for (let j = 0; j < originalCount; j++) {
      const existing = list[j];
      if (edited[j] || !existing || existing.attribute.toLowerCase() !== item.attribute.toLowerCase())
        continue;
      if (item.op === ":=") {
        list[j] = { ...item, op: "=" };
        edited[j] = true;
        moved = true;
        break;
      }
      if (item.op === "=") {
        found = true;
        break;
      }
      if (item.op === "!*") list[j] = null;
      else if (item.op === "==" && compareValues(item.attribute, existing.value, item.value) !== 0)
        list[j] = null;
    }
    if (!found && !moved && (item.op === "=" || item.op === ":=")) list.push({ ...item, op: "=" });
  }
  return list.filter((p): p is Pair => p !== null);
}

/** The value of the first instance of an attribute, ignoring case in the name. */
export function firstValue(pairs: readonly Pair[], attribute: string): string | undefined {
  const key = attribute.toLowerCase();
  // Names of another length cannot match: most are not lowercased at all (a login looks up
  // several attributes in every request's and reply's pairs).
  for (const p of pairs) {
    const name = p.attribute;
    if (name === attribute || (name.length === key.length && name.toLowerCase() === key)) return p.value;
  }
  return undefined;
}

/** rlm_sql's fall_through(): Yes, No, or not said. */
export function fallThrough(reply: readonly Pair[]): "yes" | "no" | "default" {
  const value = firstValue(reply, "Fall-Through");
  if (value === undefined) return "default";
  return /^(yes|1)$/i.test(value) ? "yes" : "no";
}

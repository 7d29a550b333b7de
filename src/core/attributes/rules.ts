// What may be stored in the four FreeRADIUS attribute tables. Users (radcheck, radreply) and groups
// (radgroupcheck, radgroupreply) share these rules: one bad row makes FreeRADIUS reject the user
// outright, so every row is checked against the dictionary before it is written.

import { type AttributeDef, findValue, parseAttributeName } from "../aaa/dictionary.ts";
import { passwordValueProblem } from "../aaa/passwords/validate.ts";
import { quotaValueProblem } from "../aaa/quotas.ts";
import { CHECK_OPERATORS, checkAttributeValue, MAX_VALUE_BYTES, REPLY_OPERATORS } from "../aaa/values.ts";
import { type FieldProblem, ValidationError } from "../shared/errors.ts";

export { MAX_VALUE_BYTES };

export const USER_TABLES = ["radcheck", "radreply"] as const;
export const GROUP_TABLES = ["radgroupcheck", "radgroupreply"] as const;
export type UserTable = (typeof USER_TABLES)[number];
export type GroupTable = (typeof GROUP_TABLES)[number];
export type AttributeTable = UserTable | GroupTable;

/** Every operator some table accepts: the check operators, then the reply-only `=`. */
export const ALL_OPERATORS = [...CHECK_OPERATORS, "="] as const;

/** What secret values read as in every answer. */
export const SECRET_MASK = "********";

/** The width of the `attribute` column. */
export const MAX_ATTRIBUTE_NAME = 64;

// Reply items that are not sent on the wire but that rlm_sql reads from reply tables itself.
const REPLY_INTERNAL_ALLOWED = new Set(["fall-through"]);
// rlm_exec runs these as programs on the RADIUS server: never settable through Wisp.
const FORBIDDEN = new Set(["exec-program", "exec-program-wait"]);
// Password equivalents whose names do not end in -Password.
const SECRET_NAMES = new Set(["password-with-header", "digest-ha1"]);

export function isReplyTable(table: AttributeTable): boolean {
  return table === "radreply" || table === "radgroupreply";
}

export function operatorsFor(table: AttributeTable): readonly string[] {
  return isReplyTable(table) ? REPLY_OPERATORS : CHECK_OPERATORS;
}

/**
 * Passwords and password hashes (Cleartext-Password, NT-Password, any "-Password"), and attributes
 * that RADIUS encrypts on the wire (Tunnel-Password, MS-MPPE keys): their values are never returned.
 */
export function isSecretAttribute(attribute: string): boolean {
  const name = attribute.replace(/:\d{1,2}$/, "").toLowerCase();
  if (name.endsWith("-password") || SECRET_NAMES.has(name)) return true;
  return parseAttributeName(attribute)?.def.encrypt !== undefined;
}

export function presentValue(attribute: string, value: string): string {
  return isSecretAttribute(attribute) ? SECRET_MASK : value;
}

export interface ItemInput {
  attribute: string;
  operator: string;
  value: string;
}

/** A checked item, as it is stored: canonical attribute name, op column, value. */
export interface StoredItem {
  attribute: string;
  op: string;
  value: string;
}

/** FreeRADIUS matches VALUE names ignoring case; store the dictionary's spelling so equal rows look equal. */
function canonicalValue(def: AttributeDef, value: string, operator: string): string {
  if (def.values.size === 0 || ["=~", "!~", "=*", "!*"].includes(operator)) return value;
  if (!["byte", "short", "integer"].includes(def.type)) return value;
  const tag = def.hasTag ? (/^:[^:]*:/.exec(value)?.[0] ?? "") : "";
  const named = findValue(def, value.slice(tag.length));
  return named ? tag + named.name : value;
}

function attributeProblem(def: AttributeDef, stored: string, table: AttributeTable): string | null {
  const name = def.name.toLowerCase();
  if (FORBIDDEN.has(name)) return `${def.name} would run a program on the RADIUS server; it cannot be set`;
  if (def.type === "tlv" || def.type === "other") return `${def.name} has no text form; it cannot be set`;
  if (stored.length > MAX_ATTRIBUTE_NAME) return `must be at most ${MAX_ATTRIBUTE_NAME} characters`;
  if (isReplyTable(table) && def.internal && !REPLY_INTERNAL_ALLOWED.has(name)) {
    const checkTable = table === "radreply" ? "radcheck" : "radgroupcheck";
    return `${def.name} is a server-side item, never sent to the access point; put it in ${checkTable}`;
  }
  return null;
}

function invalid(problems: FieldProblem[]): ValidationError {
  const first = problems[0] ?? { field: "attribute", message: "is invalid" };
  return new ValidationError(`${first.field} ${first.message}`, problems);
}

/**
 * A password item that goes into the control list (:=, =, +=) must be one the login can check:
 * FreeRADIUS would store anything and reject every login with it; Wisp says so at once.
 */
function storedPasswordProblem(attribute: string, value: string, operator: string): string | null {
  if (!["=", ":=", "+="].includes(operator)) return null;
  return passwordValueProblem(attribute, value);
}

/**
 * Checks one item for a table and returns it as it is to be stored, or throws a ValidationError
 * listing every problem found (attribute, operator, value).
 */
export function checkItem(table: AttributeTable, input: ItemInput): StoredItem {
  const problems: FieldProblem[] = [];
  const parsed = parseAttributeName(input.attribute);
  // FreeRADIUS's tagged form Tunnel-Type:1 is kept, with the dictionary's spelling of the name.
  const stored = parsed && (parsed.tag === undefined ? parsed.def.name : `${parsed.def.name}:${parsed.tag}`);
  const attributeIssue = parsed
    ? attributeProblem(parsed.def, stored ?? "", table)
    : `"${input.attribute}" is not in the RADIUS dictionary`;
  if (attributeIssue) problems.push({ field: "attribute", message: attributeIssue });
  const operators = operatorsFor(table);
  if (!operators.includes(input.operator)) {
    problems.push({ field: "operator", message: `must be one of ${operators.join(" ")} in ${table}` });
  }
  const valueIssue = parsed
    ? (checkAttributeValue(parsed.def, input.value, input.operator) ??
      quotaValueProblem(parsed.def.name, input.value) ??
      storedPasswordProblem(parsed.def.name, input.value, input.operator))
    : null;
  if (valueIssue) problems.push({ field: "value", message: valueIssue });
  if (problems.length > 0 || !parsed || stored === undefined) throw invalid(problems);
  return {
    attribute: stored,
    op: input.operator,
    value: canonicalValue(parsed.def, input.value, input.operator),
  };
}

/**
 * What a list of attributes (a user's or a group's) may be sorted by; by default by table, then id.
 * Not the value: secret values are masked, and their order would tell something about them.
 */
export const ATTRIBUTE_SORT_FIELDS = ["id", "attribute", "table"] as const;
export type AttributeSortField = (typeof ATTRIBUTE_SORT_FIELDS)[number];

// Every row read from the source is hostile input: each user and group is checked whole, with the
// same rules the API applies (core/attributes/rules.ts), and becomes either the rows Wisp will
// write or the reasons it is skipped, each naming the table and row. A user or group is imported
// whole or not at all: a user with one bad row would log in differently from the original.

import { parseAttributeName } from "../aaa/dictionary.ts";
import { isPasswordAttribute, passwordValueProblem } from "../aaa/passwords/validate.ts";
import { checkUsername } from "../aaa/values.ts";
import { checkItem, type StoredItem } from "../attributes/rules.ts";
import { MAX_PRIORITY, MIN_PRIORITY } from "../groups/rules.ts";
import { type FieldProblem, ValidationError } from "../shared/errors.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { EMAIL_PATTERN, MAX_EMAIL, MAX_FULLNAME } from "../users/rules.ts";
import type { SourceRow } from "./source-db.ts";

export type ItemTable = "radcheck" | "radreply" | "radgroupcheck" | "radgroupreply";

export interface PlannedGroup {
  name: string;
  check: StoredItem[];
  reply: StoredItem[];
  /** Password items imported as they are, and the like: said, never fatal. */
  notes: string[];
}

export interface Membership {
  groupname: string;
  priority: number;
}

export interface PlannedUser {
  username: string;
  email: string;
  fullname: string;
  phone: string;
  check: StoredItem[];
  reply: StoredItem[];
  groups: Membership[];
  /** Contact details left out, password items imported as they are: said, never fatal. */
  notes: string[];
}

/** A user's or group's source rows, by table. */
export type Bundle = Map<string, SourceRow[]>;

export const MAX_PHONE = 64;
const EMAIL = new RegExp(EMAIL_PATTERN);

const text = (value: unknown): string => (value === null || value === undefined ? "" : String(value));

/** How a row is named in messages: its table and id (or its place when the table has no id). */
export function rowName(table: string, row: SourceRow, index: number): string {
  return row.id === undefined || row.id === null ? `${table} row ${index + 1}` : `${table} id ${row.id}`;
}

/**
 * A password item the API refuses because no login could use it (a hash of the wrong length, an
 * unknown {scheme}...) is imported as it is: FreeRADIUS stored it too, and Wisp's login reads it as
 * rlm_pap does (a malformed item rejects, an unknown header is a cleartext password), so the user
 * logs in or not exactly as before. An item FreeRADIUS could check and Wisp cannot (a crypt scheme
 * Wisp lacks) is not: the user would lose a working login, so it is skipped with the reason.
 */
function unusablePassword(
  attribute: string,
  value: string,
  problems: FieldProblem[],
): StoredItem | undefined {
  const parsed = parseAttributeName(attribute);
  if (!parsed || !isPasswordAttribute(parsed.def.name) || problems.length !== 1) return undefined;
  const [only] = problems;
  const problem = passwordValueProblem(parsed.def.name, value);
  if (only?.field !== "value" || problem === null || only.message !== problem) return undefined;
  if (problem.endsWith("(not supported by Wisp)")) return undefined;
  return { attribute: parsed.def.name, op: "", value };
}

interface CheckedRow {
  item?: StoredItem;
  problem?: string;
  note?: string;
}

/** Checks one attribute row: the stored item (and a note), or why not (never quoting a password). */
function checkRow(table: ItemTable, row: SourceRow, index: number): CheckedRow {
  const where = `${rowName(table, row, index)} (${text(row.attribute).slice(0, 64)})`;
  const op = text(row.op).trim();
  if (op === "")
    return {
      problem: `${where}: the op column is empty (FreeRADIUS logs an error and guesses); give the operator`,
    };
  const input = { attribute: text(row.attribute), operator: op, value: text(row.value) };
  try {
    return { item: checkItem(table, input) };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const problems = error.details.length > 0 ? error.details : [{ field: "", message: error.message }];
    const unusable = ["=", ":=", "+="].includes(op)
      ? unusablePassword(input.attribute, input.value, problems)
      : undefined;
    if (unusable) {
      return {
        item: { ...unusable, op },
        note: `${where}: value ${problems[0]!.message}; imported as it is: FreeRADIUS rejected logins that reach it, and so does Wisp`,
      };
    }
    return { problem: `${where}: ${problems.map((p) => `${p.field} ${p.message}`.trim()).join("; ")}` };
  }
}

function checkRows(
  table: ItemTable,
  rows: SourceRow[] | undefined,
  reasons: string[],
  notes: string[],
): StoredItem[] {
  const items: StoredItem[] = [];
  (rows ?? []).forEach((row, index) => {
    const checked = checkRow(table, row, index);
    if (checked.problem) reasons.push(checked.problem);
    if (checked.item) items.push(checked.item);
    if (checked.note) notes.push(checked.note);
  });
  return items;
}

function nameProblem(kind: "user" | "group", name: string, duplicates: Map<string, string[]>): string | null {
  const bad = checkUsername(name);
  if (bad)
    return `the ${kind} name ${bad} (FreeRADIUS escapes other characters, so it never matched as stored)`;
  const variants = duplicates.get(name.toLowerCase());
  if (variants) {
    return `${kind} names ${variants.map((v) => `"${v}"`).join(", ")} differ only in case; Wisp's are unique ignoring case: rename all but one in the source`;
  }
  return null;
}

/** A group from its radgroupcheck and radgroupreply rows. */
export function checkGroup(
  name: string,
  bundle: Bundle,
  duplicates: Map<string, string[]>,
): PlannedGroup | string[] {
  const reasons: string[] = [];
  const bad = nameProblem("group", name, duplicates);
  if (bad) return [bad];
  const notes: string[] = [];
  const check = checkRows("radgroupcheck", bundle.get("radgroupcheck"), reasons, notes);
  const reply = checkRows("radgroupreply", bundle.get("radgroupreply"), reasons, notes);
  return reasons.length > 0 ? reasons : { name, check, reply, notes };
}

/** One radusergroup row: the membership, or why not. `seen`: the user's groups so far. */
function checkMembership(
  row: SourceRow,
  where: string,
  skippedGroups: ReadonlyMap<string, string>,
  seen: Map<string, string>,
): Membership | string {
  const groupname = text(row.groupname);
  const priority = Number(row.priority);
  if (groupname === "") return `${where}: the groupname is empty`;
  if (!Number.isInteger(priority) || priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
    return `${where}: priority ${text(row.priority) || "(empty)"} must be a whole number from ${MIN_PRIORITY} to ${MAX_PRIORITY}`;
  }
  const skipped = skippedGroups.get(groupname.toLowerCase());
  if (skipped !== undefined) return `${where}: member of group "${groupname}", which is skipped (${skipped})`;
  const before = seen.get(groupname.toLowerCase());
  if (before !== undefined) {
    return `${where}: in group "${groupname}" a second time (${before}); Wisp keeps one membership per group`;
  }
  seen.set(groupname.toLowerCase(), where);
  return { groupname, priority };
}

function checkMemberships(
  rows: SourceRow[] | undefined,
  skippedGroups: ReadonlyMap<string, string>,
  reasons: string[],
): Membership[] {
  const groups: Membership[] = [];
  const seen = new Map<string, string>();
  (rows ?? []).forEach((row, index) => {
    const checked = checkMembership(row, rowName("radusergroup", row, index), skippedGroups, seen);
    if (typeof checked === "string") reasons.push(checked);
    else groups.push(checked);
  });
  return groups;
}

/** daloRADIUS's userinfo: name, email and a phone; a bad field is left out with a note. */
function contact(rows: SourceRow[] | undefined, notes: string[]) {
  const info = rows?.at(-1);
  const found = { email: "", fullname: "", phone: "" };
  if (!info) return found;
  const where = rowName("userinfo", info, (rows?.length ?? 1) - 1);
  const fullname = [text(info.firstname).trim(), text(info.lastname).trim()].filter(Boolean).join(" ");
  if (fullname.length > MAX_FULLNAME || hasControlCharacters(fullname)) {
    notes.push(
      `${where}: the name is longer than ${MAX_FULLNAME} characters or has control characters; left empty`,
    );
  } else found.fullname = fullname;
  const email = text(info.email).trim();
  if (email !== "" && (email.length > MAX_EMAIL || !EMAIL.test(email))) {
    notes.push(`${where}: email "${email.slice(0, 80)}" is not an email address; left empty`);
  } else found.email = email;
  const phone =
    [info.mobilephone, info.workphone, info.homephone].map((p) => text(p).trim()).find(Boolean) ?? "";
  if (phone.length > MAX_PHONE || hasControlCharacters(phone)) {
    notes.push(
      `${where}: the phone number is longer than ${MAX_PHONE} characters or has control characters; left empty`,
    );
  } else found.phone = phone;
  return found;
}

/** A user from its radcheck, radreply, radusergroup and userinfo rows. */
export function checkUser(
  username: string,
  bundle: Bundle,
  duplicates: Map<string, string[]>,
  skippedGroups: ReadonlyMap<string, string>,
): PlannedUser | string[] {
  const bad = nameProblem("user", username, duplicates);
  if (bad) return [bad];
  const reasons: string[] = [];
  const notes: string[] = [];
  const check = checkRows("radcheck", bundle.get("radcheck"), reasons, notes);
  const reply = checkRows("radreply", bundle.get("radreply"), reasons, notes);
  const groups = checkMemberships(bundle.get("radusergroup"), skippedGroups, reasons);
  if (reasons.length > 0) return reasons;
  return { username, ...contact(bundle.get("userinfo"), notes), check, reply, groups, notes };
}

/** Whether two lists of stored items are the same, in the same order (FreeRADIUS reads them by id). */
export function sameItems(a: readonly StoredItem[], b: readonly StoredItem[]): boolean {
  return (
    a.length === b.length &&
    a.every((x, i) => x.attribute === b[i]!.attribute && x.op === b[i]!.op && x.value === b[i]!.value)
  );
}

export function sameMemberships(a: readonly Membership[], b: readonly Membership[]): boolean {
  const key = (m: Membership) => `${m.groupname}\u0000${m.priority}`;
  const left = a.map(key).sort();
  const right = b.map(key).sort();
  return left.length === right.length && left.every((k, i) => k === right[i]);
}

// SCIM Users and Groups onto Wisp's users and groups, and back (RFC 7643 sections 4.1 and 4.2).
// User: userName <-> username, active <-> status, externalId <-> external_id, the primary email
// (else the first) <-> email, name.formatted (else the name's parts, else displayName) <-> fullname;
// the name, displayName and emails as sent are kept beside them (scim_profile) for what Wisp has no
// column for. Wisp's columns decide: a user changed through the API or console reads back as changed.
// Group: displayName <-> the group's name (made a valid Wisp name, the SCIM one kept when it differs),
// members <-> radusergroup.
import type { GroupRow } from "../groups/repo.ts";
import { checkGroupInput } from "../groups/service.ts";
import { ValidationError } from "../shared/errors.ts";
import type { UserRow } from "../users/repo.ts";
import { checkUserInput } from "../users/service.ts";
import { invalidValue } from "./errors.ts";
import type { Member } from "./repo.ts";
import { GROUP_SCHEMA, USER_SCHEMA } from "./schema.ts";
import { isObject, type ScimObject } from "./values.ts";

/** A SCIM User as Wisp stores it. */
export interface UserFields {
  username: string;
  status: "enabled" | "disabled";
  external_id: string | null;
  email: string;
  fullname: string;
  scim_profile: string;
  password: string | undefined;
}

export interface GroupFields {
  name: string;
  display_name: string | null;
  external_id: string | null;
  memberIds: number[];
}

interface Profile {
  name?: ScimObject;
  displayName?: string;
  emails?: ScimObject[];
}

const meta = (type: string, row: { id: number; created: string; updated: string }, base: string) => ({
  resourceType: type,
  created: row.created,
  lastModified: row.updated,
  location: `${base}/${type}s/${row.id}`,
});

function primaryEmail(emails: ScimObject[] | undefined): string {
  const chosen = emails?.find((e) => e.primary === true) ?? emails?.[0];
  return typeof chosen?.value === "string" ? chosen.value : "";
}

function fullnameOf(profile: Profile): string {
  const name = profile.name ?? {};
  if (typeof name.formatted === "string" && name.formatted) return name.formatted;
  const parts = [name.givenName, name.middleName, name.familyName].filter((p) => typeof p === "string" && p);
  return parts.length > 0 ? parts.join(" ") : (profile.displayName ?? "");
}

/** Wisp's answer to a domain rule broken, as SCIM's invalidValue naming the SCIM attribute. */
function checked(check: () => void, fields: Record<string, string>): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const problem = error.details[0];
    const field = problem ? (fields[problem.field] ?? problem.field) : "";
    throw invalidValue(problem ? `${field} ${problem.message}` : error.message);
  }
}

/** The stored fields of a User resource (values.ts has read it), checked by the users' own rules. */
export function userFields(doc: ScimObject): UserFields {
  const username = doc.userName;
  if (typeof username !== "string") throw invalidValue("userName is required");
  const profile: Profile = {};
  if (isObject(doc.name)) profile.name = doc.name;
  if (typeof doc.displayName === "string") profile.displayName = doc.displayName;
  if (Array.isArray(doc.emails)) profile.emails = doc.emails as ScimObject[];
  const fullname = fullnameOf(profile).slice(0, 255);
  const email = primaryEmail(profile.emails);
  const password = typeof doc.password === "string" ? doc.password : undefined;
  const names = { username: "userName", email: "emails", fullname: "name", password: "password" };
  checked(() => checkUserInput({ username, email, fullname, password }), names);
  for (const [i, e] of (profile.emails ?? []).entries()) {
    checked(() => checkUserInput({ email: typeof e.value === "string" ? e.value : "" }), {
      email: `emails[${i}].value`,
    });
  }
  return {
    username,
    // RFC 7643 section 4.1.1: active is optional; a user sent without it is active.
    status: doc.active === false ? "disabled" : "enabled",
    external_id: typeof doc.externalId === "string" ? doc.externalId : null,
    email,
    fullname,
    scim_profile: JSON.stringify(profile),
    password,
  };
}

/** The User resource of a row; its groups when given. */
export function userResource(row: UserRow, groups: GroupRow[], base: string): ScimObject {
  const profile: Profile = row.scim_profile ? JSON.parse(row.scim_profile) : {};
  // Wisp's columns decide (see the opening comment): what the profile says gives way where they differ.
  if (primaryEmail(profile.emails) !== row.email)
    profile.emails = row.email ? [{ value: row.email, primary: true }] : [];
  if (fullnameOf(profile) !== row.fullname)
    profile.name = row.fullname ? { formatted: row.fullname } : undefined;
  const resource: ScimObject = { schemas: [USER_SCHEMA], id: String(row.id) };
  if (row.external_id !== null) resource.externalId = row.external_id;
  resource.userName = row.username;
  if (profile.name && Object.keys(profile.name).length > 0) resource.name = profile.name;
  if (profile.displayName) resource.displayName = profile.displayName;
  if (profile.emails && profile.emails.length > 0) resource.emails = profile.emails;
  resource.active = row.status === "enabled";
  resource.groups = groups.map((g) => ({
    value: String(g.id),
    $ref: `${base}/Groups/${g.id}`,
    display: g.display_name ?? g.name,
  }));
  resource.meta = meta("User", row, base);
  return resource;
}

/** A valid Wisp group name made from a SCIM displayName: other characters become "_". */
export function groupNameOf(displayName: string): string {
  return displayName.replace(/[^A-Za-z0-9@._:-]+/g, "_").slice(0, 64) || "group";
}

/** The stored fields of a Group resource; member values must be user ids. */
export function groupFields(doc: ScimObject): GroupFields {
  const displayName = doc.displayName;
  if (typeof displayName !== "string" || displayName.trim() === "")
    throw invalidValue("displayName is required");
  const name = groupNameOf(displayName);
  checked(() => checkGroupInput({ name, description: displayName }), {
    name: "displayName",
    description: "displayName",
  });
  const memberIds: number[] = [];
  for (const [i, member] of ((doc.members as ScimObject[] | undefined) ?? []).entries()) {
    const value = member.value;
    if (typeof value !== "string" || !/^\d{1,10}$/.test(value)) {
      throw invalidValue(`members[${i}].value must be the id of a user of this account`);
    }
    if (typeof member.type === "string" && member.type.toLowerCase() !== "user") {
      throw invalidValue(`members[${i}]: only users can be members (not ${member.type})`);
    }
    if (!memberIds.includes(Number(value))) memberIds.push(Number(value));
  }
  return {
    name,
    display_name: displayName === name ? null : displayName,
    external_id: typeof doc.externalId === "string" ? doc.externalId : null,
    memberIds,
  };
}

/** The Group resource of a row; members left out when `members` is undefined (excludedAttributes). */
export function groupResource(row: GroupRow, members: Member[] | undefined, base: string): ScimObject {
  const resource: ScimObject = { schemas: [GROUP_SCHEMA], id: String(row.id) };
  if (row.external_id !== null) resource.externalId = row.external_id;
  resource.displayName = row.display_name ?? row.name;
  if (members) {
    resource.members = members.map((m) => ({
      value: String(m.id),
      $ref: `${base}/Users/${m.id}`,
      display: m.username,
      type: "User",
    }));
  }
  resource.meta = meta("Group", row, base);
  return resource;
}

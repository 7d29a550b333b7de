// Console roles: each is a set of grants with the very names API keys use (core/keys/permissions.ts),
// so the console checks a route's "<resource>:read|write" exactly as the API checks a key's. The
// table below is the documented one: the docs and the route-by-route test read it from here.
import {
  type Action,
  allows,
  CONSOLE_RESOURCES,
  type ConsoleResource,
  type Permission,
  RESOURCES,
  type Resource,
} from "../keys/permissions.ts";

export const ROLE_NAMES = [
  "owner",
  "admin",
  "network_engineer",
  "help_desk",
  "voucher_desk",
  "read_only",
] as const;
export type Role = (typeof ROLE_NAMES)[number];

export interface RoleDefinition {
  label: string;
  /** One sentence for the team page and the docs. */
  summary: string;
  grants: readonly string[];
}

const writeAll = (resources: readonly string[]) => resources.map((r) => `${r}:write`);

/**
 * Only "full" holds team:write (invite, change roles, remove, end others' sessions): owners alone
 * manage the team. "admin" writes every other area, named one by one, so an area added to RESOURCES
 * later is theirs too.
 */
export const ROLES: Readonly<Record<Role, RoleDefinition>> = {
  owner: {
    label: "Owner",
    summary: "Everything, and the team: invites, roles, removals, the team's sessions, sign-in settings.",
    grants: ["full"],
  },
  admin: {
    label: "Admin",
    summary:
      "Every area, API keys and webhooks included; sees the team and the audit log but cannot change the team.",
    grants: [
      ...writeAll(RESOURCES),
      ...writeAll(CONSOLE_RESOURCES.filter((r) => r !== "team")),
      "team:read",
      "audit:read",
    ],
  },
  network_engineer: {
    label: "Network engineer",
    summary:
      "Networks (RadSec, EAP), policies, plans, directories, captive portals, identity providers, devices and live sessions; reads access points, users, groups, vouchers, reports and webhooks.",
    grants: [
      "networks:write",
      "policies:write",
      "plans:write",
      "directories:write",
      "nodes:read",
      "captiveportals:write",
      "identityproviders:write",
      "devices:write",
      "sessions:write",
      "users:read",
      "attributes:read",
      "groups:read",
      "vouchers:read",
      "reports:read",
      "webhooks:read",
    ],
  },
  help_desk: {
    label: "Help desk",
    summary:
      "Looks up and edits users and their devices, approves guests, disconnects sessions; reads guests, access points, groups, vouchers, networks, portals, policies (and explains them), plans and reports.",
    grants: [
      "users:write",
      "attributes:write",
      "devices:write",
      "sessions:write",
      "groups:read",
      "vouchers:read",
      "networks:read",
      "captiveportals:read",
      "policies:read",
      "plans:read",
      "guests:read",
      "nodes:read",
      "reports:read",
    ],
  },
  voucher_desk: {
    label: "Voucher desk",
    summary: "Creates, prints and exports voucher batches (with a plan); nothing else.",
    grants: ["vouchers:write", "plans:read"],
  },
  read_only: {
    label: "Read-only",
    summary: "Sees every area (API keys masked, the team) and the audit log, changes nothing: for auditors.",
    // "read" alone does not hold audit:read (core/keys/permissions.ts): this role is for auditors.
    grants: ["read", "audit:read"],
  },
};

export const DEFAULT_ROLE: Role = "owner";

export function isRole(text: string): text is Role {
  return (ROLE_NAMES as readonly string[]).includes(text);
}

/** A stored role this code does not know (a downgrade, a hand edit) allows nothing. */
export function roleAllows(role: string, permission: Permission): boolean {
  if (!isRole(role)) return false;
  const [resource, action] = permission.split(":") as [Resource | ConsoleResource, Action];
  return allows(ROLES[role].grants, resource, action);
}

export function roleLabel(role: string): string {
  return isRole(role) ? ROLES[role].label : role;
}

/** "owner, admin, ..." for error messages and help texts. */
export const ROLE_LIST = ROLE_NAMES.join(", ");

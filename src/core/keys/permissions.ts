// Key permissions: "<resource>:read" / "<resource>:write", plus the shorthands "read" and "full".

export const RESOURCES = [
  "users",
  "attributes",
  "groups",
  "networks",
  "captiveportals",
  "vouchers",
  "reports",
  "sessions",
  "identityproviders",
  "devices",
  // Read-only views (issue 31): access points seen, guests registered, the account and its keys.
  "nodes",
  "guests",
  "account",
  "keys",
  // SCIM 2.0 provisioning at /scim/v2 (src/http/scim): the grant an identity provider's token needs.
  "scim",
  "policies",
  "plans",
  "directories",
] as const;
/**
 * "audit" is outside RESOURCES: only `audit:read` (or "full") reads it, not the "read" shorthand,
 * since who changed what, from which address, is for auditors; and there is no audit:write.
 */
export type Resource = (typeof RESOURCES)[number] | "audit";
export const AUDIT_READ = "audit:read";
export type Action = "read" | "write";
/**
 * Areas only the console has (no API route serves them): webhook endpoints and the team of console
 * admins. Same "<resource>:read|write" names, held by console roles (core/admins/roles.ts); never
 * grantable to an API key ("full" and "read" on a key cover them, but no API route asks). Keys are
 * read through the API too (GET /api/keys) and made in the console.
 */
export const CONSOLE_RESOURCES = ["webhooks", "team"] as const;
export type ConsoleResource = (typeof CONSOLE_RESOURCES)[number];
/** A permission name as routes declare it, e.g. "users:write". */
export type Permission = `${Resource | ConsoleResource}:${Action}`;

const ALL_GRANTS = new Set<string>([
  "full",
  "read",
  ...RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`]),
  AUDIT_READ,
]);

/**
 * Parses "full", "read" or a comma-separated list of grants. Returns the normalised list,
 * or throws with a sentence naming the first unknown grant.
 */
export function parsePermissions(text: string): string[] {
  const grants = text
    .split(",")
    .map((g) => g.trim().toLowerCase())
    .filter(Boolean);
  if (grants.length === 0) throw new Error("permissions must name at least one grant");
  for (const grant of grants) {
    if (!ALL_GRANTS.has(grant)) {
      throw new Error(
        `unknown permission "${grant}" (use full, read, audit:read, or <resource>:read|write for ${RESOURCES.join(", ")})`,
      );
    }
  }
  return [...new Set(grants)];
}

/** Whether the grants allow the action on the resource. Write implies read of the same resource. */
export function allows(
  grants: readonly string[],
  resource: Resource | ConsoleResource,
  action: Action,
): boolean {
  for (const grant of grants) {
    if (grant === "full") return true;
    if (resource === "audit") {
      if (grant === AUDIT_READ && action === "read") return true;
      continue;
    }
    if (grant === "read" && action === "read") return true;
    if (grant === `${resource}:write`) return true;
    if (grant === `${resource}:read` && action === "read") return true;
  }
  return false;
}

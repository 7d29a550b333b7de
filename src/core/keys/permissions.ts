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
] as const;
/**
 * "audit" is outside RESOURCES: only `audit:read` (or "full") reads it, not the "read" shorthand,
 * since who changed what, from which address, is for auditors; and there is no audit:write.
 */
export type Resource = (typeof RESOURCES)[number] | "audit";
export const AUDIT_READ = "audit:read";
export type Action = "read" | "write";

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
export function allows(grants: readonly string[], resource: Resource, action: Action): boolean {
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

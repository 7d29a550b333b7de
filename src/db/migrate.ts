// Runs the migrations in src/db/migrations in order; called at every start (server, CLI, tests).
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";
import type { Database, DialectName } from "./database.ts";
import * as foundation from "./migrations/001_foundation.ts";
import * as radiusData from "./migrations/002_radius_data.ts";
import * as radiusRuntime from "./migrations/003_radius_runtime.ts";
import * as jobs from "./migrations/004_jobs.ts";
import * as reports from "./migrations/005_reports.ts";
import * as webhooks from "./migrations/006_webhooks.ts";
import * as consoleTables from "./migrations/007_console.ts";
import * as userListing from "./migrations/008_user_listing.ts";
import * as consolePendingSecrets from "./migrations/009_console_pending_secrets.ts";
import * as accountIsolation from "./migrations/011_account_isolation.ts";
import * as deploymentIdentity from "./migrations/012_deployment_identity.ts";
import * as portalPages from "./migrations/014_portal_pages.ts";
import * as portalLogo from "./migrations/015_portal_logo.ts";
import * as portalGuests from "./migrations/016_portal_guests.ts";
import * as certificates from "./migrations/017_certificates.ts";
import * as authMethod from "./migrations/018_auth_method.ts";
import * as sessions from "./migrations/019_sessions.ts";
import * as partitions from "./migrations/020_partitions.ts";
import * as retentionIndexes from "./migrations/021_retention_indexes.ts";
import * as portalHandoffOptions from "./migrations/022_portal_handoff_options.ts";
import * as portalAllowedGateways from "./migrations/023_portal_allowed_gateways.ts";
import * as radsecCertificates from "./migrations/024_radsec_certificates.ts";
import * as devices from "./migrations/025_devices.ts";
import * as imports from "./migrations/026_imports.ts";
import * as guestVerification from "./migrations/027_guest_verification.ts";
import * as identityProviders from "./migrations/028_identity_providers.ts";
import * as consoleSsoSessions from "./migrations/029_console_sso_sessions.ts";
import * as policies from "./migrations/030_policies.ts";
import * as plans from "./migrations/031_plans.ts";
import * as coa from "./migrations/032_coa.ts";
import * as consoleRoles from "./migrations/033_console_roles.ts";
import * as consoleTwoFactor from "./migrations/034_console_two_factor.ts";
import * as auditLog from "./migrations/035_audit_log.ts";
import * as directories from "./migrations/036_directories.ts";
import * as scim from "./migrations/037_scim.ts";
import * as guestOrigin from "./migrations/038_guest_origin.ts";

type Step = { up(db: Kysely<unknown>, dialect: DialectName): Promise<void> };
const steps: Record<string, Step> = {
  "001_foundation": foundation,
  "002_radius_data": radiusData,
  "003_radius_runtime": radiusRuntime,
  "004_jobs": jobs,
  "005_reports": reports,
  "006_webhooks": webhooks,
  "007_console": consoleTables,
  "008_user_listing": userListing,
  "009_console_pending_secrets": consolePendingSecrets,
  "011_account_isolation": accountIsolation,
  "012_deployment_identity": deploymentIdentity,
  "014_portal_pages": portalPages,
  "015_portal_logo": portalLogo,
  "016_portal_guests": portalGuests,
  "017_certificates": certificates,
  "018_auth_method": authMethod,
  "019_sessions": sessions,
  "020_partitions": partitions,
  "021_retention_indexes": retentionIndexes,
  "022_portal_handoff_options": portalHandoffOptions,
  "023_portal_allowed_gateways": portalAllowedGateways,
  "024_radsec_certificates": radsecCertificates,
  "025_devices": devices,
  "026_imports": imports,
  "027_guest_verification": guestVerification,
  "028_identity_providers": identityProviders,
  "029_console_sso_sessions": consoleSsoSessions,
  "030_policies": policies,
  "031_plans": plans,
  "032_coa": coa,
  "033_console_roles": consoleRoles,
  "034_console_two_factor": consoleTwoFactor,
  "035_audit_log": auditLog,
  "036_directories": directories,
  "037_scim": scim,
  "038_guest_origin": guestOrigin,
};

class StaticProvider implements MigrationProvider {
  constructor(private readonly dialect: DialectName) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const migrations: Record<string, Migration> = {};
    for (const [name, step] of Object.entries(steps)) {
      migrations[name] = { up: (db) => step.up(db, this.dialect) };
    }
    return migrations;
  }
}

/**
 * Every step recorded as done: Kysely's Migrator would change nothing, but on its way it creates its
 * tables if missing, takes its lock and commits write transactions (about 70 ms of a CLI command's
 * 300 here). One read answers the common case; anything else (no table yet, a step missing or
 * unknown, a read that fails) goes through the Migrator.
 */
async function upToDate(database: Database): Promise<boolean> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(database.db);
    const done = new Set(rows.map((r) => r.name));
    // A step this build does not know (a newer Wisp's) goes to the Migrator too, which refuses it.
    const names = Object.keys(steps);
    return done.size === names.length && names.every((name) => done.has(name));
  } catch {
    return false;
  }
}

/** Migrates to the latest step, or up to `target` (a step's name; tests of a later step's data). */
export async function migrate(database: Database, target?: string): Promise<void> {
  if (target === undefined && (await upToDate(database))) return;
  const migrator = new Migrator({
    db: database.db,
    provider: new StaticProvider(database.dialect),
    // Numbers are handed out to branches ahead of merging: a database that already ran 022 must
    // still take 020 and 021 when they arrive, instead of refusing to start.
    allowUnorderedMigrations: true,
  });
  const { error, results } = target ? await migrator.migrateTo(target) : await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (!error && !failed) return;
  const cause = (error as Error)?.message || (error as { code?: string })?.code || String(error);
  // No failed step: the database could not even be asked which steps it has (not reachable).
  throw new Error(failed ? `migration ${failed.migrationName} failed: ${cause}` : cause);
}

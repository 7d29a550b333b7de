// Writing an audit row: called by services inside the transaction of the change they make, with
// that transaction's connection (as core/events does), so the row exists exactly when the change
// does. The actor comes from the door's scope (context.ts), the masking from mask.ts.
import { type Kysely, sql } from "kysely";
import type { Schema } from "../../db/schema.ts";
import { isoNow } from "../shared/time.ts";
import { auditSkipped, currentActor } from "./context.ts";
import { maskSecrets } from "./mask.ts";

export interface AuditEntry {
  accountId: number;
  /** What kind of thing changed: "user", "network", "webhook", ... (singular, snake_case). */
  resource: string;
  /** Its id (or name, for things named rather than numbered). */
  id: number | string;
  /** create, update, delete, or a verb of the area: rotate_secret, revoke, disconnect, ... */
  action: string;
  /** The fields before and after the change, as the API shows them; secrets are masked here. */
  before?: unknown;
  after?: unknown;
}

function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(maskSecrets(value));
}

/** Inserts one audit row with `db`, which must be the change's transaction. */
export async function recordAudit(
  // Any area's connection: some type theirs wider (tables of their own); audit_log is the same.
  // biome-ignore lint/suspicious/noExplicitAny: every Kysely<...> of this database is accepted
  connection: Kysely<any>,
  entry: AuditEntry,
): Promise<void> {
  if (auditSkipped()) return;
  const db = connection as Kysely<Pick<Schema, "audit_log">>;
  const actor = currentActor();
  const created = isoNow();
  const row = {
    account_id: entry.accountId,
    created,
    actor_type: actor.type,
    actor_id: actor.id.slice(0, 100),
    actor_name: actor.name.slice(0, 320),
    actor_role: actor.role.slice(0, 40),
    address: actor.address.slice(0, 64),
    resource: entry.resource,
    resource_id: String(entry.id).slice(0, 200),
    action: entry.action,
    before: json(entry.before),
    after: json(entry.after),
  };
  await db.insertInto("audit_log").values(row).execute();
  await auditEvent(connection, row);
}

/** The webhook kind of an audit row: audit.created, audit.deleted, or audit.updated for the rest. */
export function auditKind(action: string): "audit.created" | "audit.updated" | "audit.deleted" {
  return action === "create" ? "audit.created" : action === "delete" ? "audit.deleted" : "audit.updated";
}

/**
 * The row as an `audit.*` event for webhooks, in the same transaction, written only when one of the
 * account's endpoints names an audit kind (they are opt-in: "all" does not include them), so that an
 * account without such an endpoint pays one indexed lookup and no row.
 */
async function auditEvent(
  // biome-ignore lint/suspicious/noExplicitAny: as recordAudit
  connection: Kysely<any>,
  row: {
    account_id: number;
    created: string;
    action: string;
    before: string | null;
    after: string | null;
  } & Record<string, unknown>,
): Promise<void> {
  const { before, after, ...rest } = row;
  const data = JSON.stringify({
    ...rest,
    before: before === null ? null : JSON.parse(before),
    after: after === null ? null : JSON.parse(after),
  });
  await sql`insert into events (account_id, kind, data, created)
    select cast(${row.account_id} as integer), ${auditKind(row.action)}, ${data}, ${row.created}
    where exists (select 1 from webhook_endpoints
      where account_id = ${row.account_id} and event_kinds like ${'%"audit.%'})`.execute(connection);
}

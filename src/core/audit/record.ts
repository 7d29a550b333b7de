// Writing an audit row: called by services inside the transaction of the change they make, with
// that transaction's connection (as core/events does), so the row exists exactly when the change
// does. The actor comes from the door's scope (context.ts), the masking from mask.ts.
import type { Kysely } from "kysely";
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
  await db
    .insertInto("audit_log")
    .values({
      account_id: entry.accountId,
      created: isoNow(),
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
    })
    .execute();
}

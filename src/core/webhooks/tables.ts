// Row types of the webhook tables (migration 006), added to the shared Schema with withTables so
// the webhook area keeps its own tables to itself.
import type { Generated, Kysely } from "kysely";
import type { Schema } from "../../db/schema.ts";

export interface WebhookEndpointsTable {
  id: Generated<number>;
  account_id: number;
  url: string;
  /** JSON array of event kinds; ["*"] = all. */
  event_kinds: string;
  enabled: number;
  disabled_reason: string | null;
  /** Encrypted; see crypto.ts. */
  secret: string;
  lock_by: string | null;
  lock_until: number | null;
  driver_job: number | null;
  created: string;
  updated: string;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  account_id: number;
  endpoint_id: number;
  event_id: number;
  message_id: string;
  status: string;
  tries: number;
  attempts: number;
  next_at: number;
  last_status: number | null;
  last_error: string | null;
  created: string;
  updated: string;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  account_id: number;
  delivery_id: number;
  attempt: number;
  started: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response: string | null;
}

export interface WebhookCursorsTable {
  account_id: number;
  last_txid: number;
  last_event_id: number;
}

/** A type alias, not an interface: withTables wants an index-signature-compatible record. */
export type WebhookTables = {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_cursors: WebhookCursorsTable;
};

export type WebhookDb = Kysely<Schema & WebhookTables>;

export function withWebhookTables(db: Kysely<Schema>): WebhookDb {
  return db.withTables<WebhookTables>();
}

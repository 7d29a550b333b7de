// The events table: one row per event, written in the same transaction as the change it reports,
// so the webhook outbox never misses an event and never reports a change that did not happen.
import type { Kysely } from "kysely";
import { preparedInsert } from "../../db/prepared.ts";
import type { Schema } from "../../db/schema.ts";
import { isoNow } from "../shared/time.ts";

export type EventKind =
  | "user.authenticated"
  | "user.rejected"
  | "user.created"
  | "user.updated"
  | "user.deleted"
  | "guest.registered"
  | "device.created"
  | "device.updated"
  | "device.deleted"
  | "guest.verified"
  | "guest.sponsor_requested"
  | "guest.approved"
  | "guest.denied"
  | "voucher.activated"
  | "session.started"
  | "session.stopped"
  | "session.disconnected"
  | "session.coa"
  | "report.ready"
  // Opt-in (not in "all"): one per audit row (core/audit/record.ts).
  | "audit.created"
  | "audit.updated"
  | "audit.deleted";

export interface NewEvent {
  accountId: number;
  kind: EventKind;
  data: Record<string, unknown>;
}

interface EventRow extends Record<string, unknown> {
  account_id: number;
  kind: EventKind;
  data: string;
  created: string;
}

/** Compiled once per row count (db/prepared.ts): every login and accounting packet writes events. */
const insertEventRows = preparedInsert<EventRow>(
  (db, rows) => db.insertInto("events").values(rows),
  ["account_id", "kind", "data", "created"],
);

/** Writes events with the given connection, which is the caller's transaction. */
export async function insertEvents(
  db: Kysely<Schema>,
  events: readonly NewEvent[],
  now = isoNow(),
): Promise<void> {
  await insertEventRows(
    db,
    events.map((e) => ({
      account_id: e.accountId,
      kind: e.kind,
      data: JSON.stringify(e.data),
      created: now,
    })),
  );
}

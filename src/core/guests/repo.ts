// SQL of verified guests: verifications in progress and the messages sent (the caps count them).
// Every statement names the account (the guest pages know it from the portal in the address).

import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { GuestSendsTable, GuestVerificationsTable, Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { insertEvents, type NewEvent } from "../events/repo.ts";

export type VerificationRow = Selectable<GuestVerificationsTable>;
export type VerificationChanges = Omit<Updateable<GuestVerificationsTable>, "id" | "account_id">;
export type SendRow = Insertable<GuestSendsTable>;

/** Which sends a cap counts: one recipient, one device, one client address, or the whole account. */
export type SendScope =
  | { recipient: string }
  | { client_mac: string }
  | { address: string }
  | { channel: string; client_mac: string }
  | Record<string, never>;

export class GuestsRepo {
  constructor(private readonly db: Kysely<Schema>) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  transaction<T>(fn: (repo: GuestsRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new GuestsRepo(trx)));
  }

  async insert(row: Insertable<GuestVerificationsTable>): Promise<VerificationRow> {
    return this.db.insertInto("guest_verifications").values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(accountId: number, id: number, changes: VerificationChanges): Promise<VerificationRow | undefined> {
    return this.db
      .updateTable("guest_verifications")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Moves a pending row on only if it is still as read (status and secret): two requests racing
   * with one code or link cannot both win; the loser sees false.
   */
  async settle(
    accountId: number,
    id: number,
    expected: { status: string; secret_hash: string | null },
    changes: VerificationChanges,
  ): Promise<VerificationRow | undefined> {
    let query = this.db
      .updateTable("guest_verifications")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where("status", "=", expected.status);
    query =
      expected.secret_hash === null
        ? query.where("secret_hash", "is", null)
        : query.where("secret_hash", "=", expected.secret_hash);
    return query.returningAll().executeTakeFirst();
  }

  /** Counts one attempt at the code unless `max` were made already (then undefined). */
  countAttempt(accountId: number, id: number, max: number): Promise<VerificationRow | undefined> {
    return this.db
      .updateTable("guest_verifications")
      .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where("status", "=", "pending")
      .where("attempts", "<", max)
      .returningAll()
      .executeTakeFirst();
  }

  findById(accountId: number, id: number): Promise<VerificationRow | undefined> {
    return this.db
      .selectFrom("guest_verifications")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  findByPage(accountId: number, portalId: number, pageHash: string): Promise<VerificationRow | undefined> {
    return this.db
      .selectFrom("guest_verifications")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("portal_id", "=", portalId)
      .where("page_hash", "=", pageHash)
      .executeTakeFirst();
  }

  findBySecret(
    accountId: number,
    portalId: number,
    secretHash: string,
  ): Promise<VerificationRow | undefined> {
    return this.db
      .selectFrom("guest_verifications")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("portal_id", "=", portalId)
      .where("secret_hash", "=", secretHash)
      .executeTakeFirst();
  }

  /** Verifications of the account still readable, newest first (the console's pending guests). */
  listOpen(accountId: number, now: number, limit: number): Promise<VerificationRow[]> {
    return this.db
      .selectFrom("guest_verifications")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("expires", ">", now)
      .where("status", "in", ["pending", "locked", "verified"])
      .orderBy("created", "desc")
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
  }

  /** A message sent; the account's sends older than a day (no cap looks further back) go at the same time. */
  async recordSend(row: SendRow, now: number): Promise<void> {
    await this.db
      .deleteFrom("guest_sends")
      .where("account_id", "=", row.account_id)
      .where("created", "<", now - 86_400)
      .execute();
    await this.db.insertInto("guest_sends").values(row).execute();
  }

  /** How many sends of the scope since `since`, and when the oldest of them was (for Retry-After). */
  async countSends(
    accountId: number,
    scope: SendScope,
    since: number,
  ): Promise<{ count: number; oldest: number | null }> {
    let query = this.db
      .selectFrom("guest_sends")
      .where("account_id", "=", accountId)
      .where("created", ">", since);
    for (const [column, value] of Object.entries(scope)) {
      query = query.where(column as "recipient", "=", value as string);
    }
    const row = await query
      .select((eb) => [eb.fn.countAll<number>().as("count"), eb.fn.min<number>("created").as("oldest")])
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), oldest: row.oldest === null ? null : Number(row.oldest) };
  }

  async recordEvents(events: readonly NewEvent[]): Promise<void> {
    await insertEvents(this.db, events);
  }
}

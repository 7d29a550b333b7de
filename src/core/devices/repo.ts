// The devices table, and what the device pages read beside it (its sessions and authentications,
// found by its MAC). Every statement names the account.

import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { DevicesTable, Schema } from "../../db/schema.ts";
import { ordered, type SortPlan } from "../../db/sort.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { type EventKind, insertEvents } from "../events/repo.ts";
import { queueDisconnect } from "../sessions/jobs.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import { likePattern } from "../shared/text.ts";
import type { DeviceSortField } from "./rules.ts";

export type DeviceRow = Selectable<DevicesTable>;
export type NewDeviceRow = Insertable<DevicesTable>;
export type DeviceChanges = Omit<Updateable<DevicesTable>, "id" | "account_id" | "created">;

export interface DeviceFilter {
  status?: string | undefined;
  kind?: string | undefined;
  userId?: number | undefined;
  voucherId?: number | undefined;
  groupId?: number | undefined;
  search?: string | undefined;
}

const SORT: SortPlan<DeviceSortField> = {
  keys: {
    id: { column: "id" },
    mac: { column: "mac" },
    name: { column: "name", text: true },
    status: { column: "status" },
    created: { column: "created" },
    updated: { column: "updated" },
    expires: { column: "expires", nullable: true },
    last_seen: { column: "last_seen", nullable: true },
  },
  defaultOrder: [{ field: "id", descending: false }],
  unique: [{ column: "id" }],
};

/** Lookups by name and by id run in chunks: well below both databases' parameter limits. */
const CHUNK = 500;

export class DevicesRepo {
  constructor(
    readonly db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  transaction<T>(fn: (repo: DevicesRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new DevicesRepo(trx, this.dialect)));
  }

  private filtered(accountId: number, filter: DeviceFilter) {
    let query = this.db.selectFrom("devices").where("account_id", "=", accountId);
    if (filter.status) query = query.where("status", "=", filter.status);
    if (filter.kind) query = query.where("kind", "=", filter.kind);
    if (filter.userId !== undefined) query = query.where("user_id", "=", filter.userId);
    if (filter.voucherId !== undefined) query = query.where("voucher_id", "=", filter.voucherId);
    if (filter.groupId !== undefined) query = query.where("group_id", "=", filter.groupId);
    if (filter.search) {
      const pattern = likePattern(filter.search);
      query = query.where((eb) =>
        eb.or(
          ["mac", "name", "description"].map(
            (column) => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`,
          ),
        ),
      );
    }
    return query;
  }

  async list(
    accountId: number,
    filter: DeviceFilter,
    page: PageRequest,
    sort?: Sort<DeviceSortField>,
  ): Promise<{ rows: DeviceRow[]; total: number }> {
    const query = this.filtered(accountId, filter);
    const [rows, count] = await Promise.all([
      ordered(query.selectAll(), this.dialect, SORT, sort).limit(page.limit).offset(offsetOf(page)).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  /** The account's devices with ids above `after`, in id order (export reads them page by page). */
  after(accountId: number, after: number, limit: number): Promise<DeviceRow[]> {
    return this.db
      .selectFrom("devices")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", ">", after)
      .orderBy("id")
      .limit(limit)
      .execute();
  }

  findById(accountId: number, id: number): Promise<DeviceRow | undefined> {
    return this.db
      .selectFrom("devices")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  findByMac(accountId: number, mac: string): Promise<DeviceRow | undefined> {
    return this.db
      .selectFrom("devices")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("mac", "=", mac)
      .executeTakeFirst();
  }

  /** Which of these MACs the account has already. */
  async existingMacs(accountId: number, macs: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < macs.length; i += CHUNK) {
      const rows = await this.db
        .selectFrom("devices")
        .select("mac")
        .where("account_id", "=", accountId)
        .where("mac", "in", macs.slice(i, i + CHUNK))
        .execute();
      for (const row of rows) found.add(row.mac);
    }
    return found;
  }

  insert(row: NewDeviceRow): Promise<DeviceRow> {
    return this.db.insertInto("devices").values(row).returningAll().executeTakeFirstOrThrow();
  }

  /** Many rows (an import's chunk), one statement per 200 (16 columns: far below parameter limits). */
  async insertMany(rows: NewDeviceRow[]): Promise<DeviceRow[]> {
    const inserted: DeviceRow[] = [];
    for (let i = 0; i < rows.length; i += 200) {
      inserted.push(
        ...(await this.db
          .insertInto("devices")
          .values(rows.slice(i, i + 200))
          .returningAll()
          .execute()),
      );
    }
    return inserted;
  }

  update(accountId: number, id: number, changes: DeviceChanges): Promise<DeviceRow | undefined> {
    return this.db
      .updateTable("devices")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  async delete(accountId: number, id: number): Promise<void> {
    await this.db.deleteFrom("devices").where("account_id", "=", accountId).where("id", "=", id).execute();
  }

  async countOfUser(accountId: number, userId: number): Promise<number> {
    const row = await this.db
      .selectFrom("devices")
      .select((eb) => eb.fn.countAll<number>().as("total"))
      .where("account_id", "=", accountId)
      .where("user_id", "=", userId)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  // Owners and groups, by id (checks) and by name (imports).

  userById(accountId: number, id: number) {
    return this.db
      .selectFrom("users")
      .select(["id", "username", "status"])
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  userByName(accountId: number, username: string) {
    return this.db
      .selectFrom("users")
      .select(["id", "username", "status"])
      .where("account_id", "=", accountId)
      .where("username", "=", username)
      .executeTakeFirst();
  }

  voucherById(accountId: number, id: number) {
    return this.db
      .selectFrom("vouchers")
      .select(["id", "code"])
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  groupById(accountId: number, id: number) {
    return this.db
      .selectFrom("groups")
      .select(["id", "name"])
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** Ids by name for an import: users by username ignoring case, vouchers by code, groups by name. */
  async idsByName(
    accountId: number,
    table: "users" | "vouchers" | "groups",
    names: string[],
  ): Promise<Map<string, number>> {
    const column = table === "users" ? "username" : table === "vouchers" ? "code" : "name";
    const found = new Map<string, number>();
    const wanted = [...new Set(names.map((n) => n.toLowerCase()))];
    for (let i = 0; i < wanted.length; i += CHUNK) {
      const rows = await this.db
        .selectFrom(table)
        .select(["id", sql<string>`lower(${sql.ref(column)})`.as("key")])
        .where("account_id", "=", accountId)
        .where(sql`lower(${sql.ref(column)})`, "in", wanted.slice(i, i + CHUNK))
        .execute();
      for (const row of rows) found.set(row.key, row.id);
    }
    return found;
  }

  /** Names by id for an export page: usernames, voucher codes, group names. */
  async namesById(
    accountId: number,
    table: "users" | "vouchers" | "groups",
    ids: number[],
  ): Promise<Map<number, string>> {
    const found = new Map<number, string>();
    const wanted = [...new Set(ids)];
    if (wanted.length === 0) return found;
    const column = table === "users" ? "username" : table === "vouchers" ? "code" : "name";
    for (let i = 0; i < wanted.length; i += CHUNK) {
      const rows = await this.db
        .selectFrom(table)
        .select(["id", sql<string>`${sql.ref(column)}`.as("name")])
        .where("account_id", "=", accountId)
        .where("id", "in", wanted.slice(i, i + CHUNK))
        .execute();
      for (const row of rows) found.set(row.id, row.name);
    }
    return found;
  }

  /** The device's latest sessions (by its MAC). */
  sessionsOf(accountId: number, mac: string, limit: number) {
    return this.db
      .selectFrom("radacct")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("client_mac", "=", mac)
      .orderBy("radacctid", "desc")
      .limit(limit)
      .execute();
  }

  /** The device's latest authentication attempts (by its MAC). */
  authenticationsOf(accountId: number, mac: string, limit: number) {
    return this.db
      .selectFrom("radpostauth")
      .select([
        "id",
        "username",
        "reply",
        "reason",
        "method",
        "authdate",
        "network_id",
        "user_id",
        "portal_id",
        "policy_name",
      ])
      .where("account_id", "=", accountId)
      .where("client_mac", "=", mac)
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
  }

  async recordEvents(accountId: number, kind: EventKind, data: Record<string, unknown>[]): Promise<void> {
    for (let i = 0; i < data.length; i += 1000) {
      await insertEvents(
        this.db,
        data.slice(i, i + 1000).map((d) => ({ accountId, kind, data: d })),
      );
    }
  }

  /** Queues the disconnection of the device's open sessions, in this repository's transaction. */
  disconnectDevice(accountId: number, mac: string, reason: string): Promise<void> {
    return queueDisconnect(this.db, this.dialect, accountId, { client_macs: [mac], reason });
  }
}

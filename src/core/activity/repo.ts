// Read-only views the console shows that no area's service offers: a network's latest
// authentications (radpostauth) and an account's voucher batches. Scoped by account_id.
import type { Kysely, Selectable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema, VoucherBatchesTable } from "../../db/schema.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";

export type BatchRow = Selectable<VoucherBatchesTable>;

export interface AuthenticationRow {
  id: number;
  /** ISO 8601 UTC. */
  time: string;
  username: string;
  accepted: boolean;
  reason: string | null;
  client_mac: string | null;
  ap_mac: string | null;
  ssid: string | null;
}

export interface UserGroupRow {
  group_id: number;
  name: string;
  priority: number;
}

export class ActivityRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {}

  /** radpostauth.authdate is 'YYYY-MM-DD HH:MM:SS' UTC text on SQLite, timestamptz on PostgreSQL. */
  private iso(value: string | Date): string {
    if (value instanceof Date) return `${value.toISOString().slice(0, 19)}Z`;
    return this.dialect === "sqlite" ? `${value.slice(0, 19).replace(" ", "T")}Z` : value;
  }

  async recentAuthentications(
    accountId: number,
    networkId: number,
    limit: number,
  ): Promise<AuthenticationRow[]> {
    const rows = await this.db
      .selectFrom("radpostauth")
      .select(["id", "authdate", "username", "reply", "reason", "client_mac", "ap_mac", "ssid"])
      .where("account_id", "=", accountId)
      .where("network_id", "=", networkId)
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      id: Number(row.id),
      time: this.iso(row.authdate),
      username: row.username,
      accepted: row.reply === "Access-Accept",
      reason: row.reason,
      client_mac: row.client_mac,
      ap_mac: row.ap_mac,
      ssid: row.ssid,
    }));
  }

  async listBatches(accountId: number, page: PageRequest): Promise<{ rows: BatchRow[]; total: number }> {
    const query = this.db.selectFrom("voucher_batches").where("account_id", "=", accountId);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy("id", "desc").limit(page.limit).offset(offsetOf(page)).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  findBatch(accountId: number, id: number): Promise<BatchRow | undefined> {
    return this.db
      .selectFrom("voucher_batches")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** The groups a user is a member of, by priority (the order FreeRADIUS evaluates them in). */
  groupsOfUser(accountId: number, username: string): Promise<UserGroupRow[]> {
    return this.db
      .selectFrom("radusergroup as m")
      .innerJoin("groups as g", (join) =>
        join.onRef("g.account_id", "=", "m.account_id").onRef("g.name", "=", "m.groupname"),
      )
      .select(["g.id as group_id", "g.name", "m.priority"])
      .where("m.account_id", "=", accountId)
      .where("m.username", "=", username)
      .orderBy("m.priority")
      .orderBy("g.name")
      .execute();
  }
}

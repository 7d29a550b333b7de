import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { prepared } from "../../db/prepared.ts";
import type { CaptivePortalsTable, PortalLoginsTable, PortalLogosTable, Schema } from "../../db/schema.ts";
import { ordered, type SortPlan } from "../../db/sort.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import { likePattern } from "../shared/text.ts";
import type { PortalSortField } from "./rules.ts";

export type PortalRow = Selectable<CaptivePortalsTable>;
export type PortalListRow = PortalRow & { account_name: string };
export type GuestPortalRow = PortalRow & { logo_sha256: string | null };
export type LogoRow = Selectable<PortalLogosTable>;
export type LogoMeta = Omit<LogoRow, "data">;
export type PortalChanges = Omit<Updateable<CaptivePortalsTable>, "id" | "account_id" | "created">;

export interface PortalFilter {
  search?: string | undefined;
  networkId?: number | undefined;
}

/** A foreign-key failure: the network went away while the portal was being written. */
export function isMissingReference(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_FOREIGNKEY" || code === "23503";
}

const SORT: SortPlan<PortalSortField> = {
  keys: {
    id: { column: "id" },
    name: { column: "name", text: true },
    network_id: { column: "network_id" },
    created: { column: "created" },
    updated: { column: "updated" },
  },
  defaultOrder: [{ field: "id", descending: false }],
  unique: [{ column: "id" }],
};

export class PortalsRepo {
  private guestRow: ((id: number) => Promise<GuestPortalRow[]>) | undefined;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Runs fn with a repository bound to one transaction. */
  transaction<T>(fn: (repo: PortalsRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new PortalsRepo(trx, this.dialect)));
  }

  async list(
    accountId: number,
    filter: PortalFilter,
    page: PageRequest,
    sort?: Sort<PortalSortField>,
  ): Promise<{ rows: PortalRow[]; total: number }> {
    let query = this.db.selectFrom("captive_portals").where("account_id", "=", accountId);
    if (filter.networkId !== undefined) query = query.where("network_id", "=", filter.networkId);
    if (filter.search) {
      query = query.where(sql<boolean>`lower(name) like ${likePattern(filter.search)} escape '\\'`);
    }
    const [rows, count] = await Promise.all([
      ordered(query.selectAll(), this.dialect, SORT, sort).limit(page.limit).offset(offsetOf(page)).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  /** Operators' listing (CLI): every account's portals unless narrowed to an account, network or id. */
  listWithAccounts(
    filter: { accountId?: number; networkId?: number; id?: number } = {},
  ): Promise<PortalListRow[]> {
    let query = this.db
      .selectFrom("captive_portals")
      .innerJoin("accounts", "accounts.id", "captive_portals.account_id")
      .selectAll("captive_portals")
      .select("accounts.name as account_name")
      .orderBy("captive_portals.id");
    if (filter.accountId !== undefined)
      query = query.where("captive_portals.account_id", "=", filter.accountId);
    if (filter.networkId !== undefined)
      query = query.where("captive_portals.network_id", "=", filter.networkId);
    if (filter.id !== undefined) query = query.where("captive_portals.id", "=", filter.id);
    return query.execute();
  }

  findById(accountId: number, id: number): Promise<PortalRow | undefined> {
    return this.db
      .selectFrom("captive_portals")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /**
   * A portal by id alone with its logo's digest, for the guest pages (the id in the login URL names
   * its account). Compiled once: every guest page asks it (bench/portal.ts).
   */
  async findForGuests(id: number): Promise<GuestPortalRow | undefined> {
    this.guestRow ??= prepared(
      this.db,
      (portalId: number) =>
        this.db
          .selectFrom("captive_portals as p")
          .leftJoin("portal_logos as l", "l.portal_id", "p.id")
          .selectAll("p")
          .select("l.sha256 as logo_sha256")
          .where("p.id", "=", portalId),
      1,
    );
    return (await this.guestRow(id))[0];
  }

  /** Whether the account has this network: a portal may only hang off its own account's networks. */
  async hasNetwork(accountId: number, networkId: number): Promise<boolean> {
    const row = await this.db
      .selectFrom("nas")
      .select("id")
      .where("account_id", "=", accountId)
      .where("id", "=", networkId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Whether the account has this group: registered guests join a group of the portal's account. */
  async hasGroup(accountId: number, groupId: number): Promise<boolean> {
    const row = await this.db
      .selectFrom("groups")
      .select("id")
      .where("account_id", "=", accountId)
      .where("id", "=", groupId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Whether every id names an identity provider of the account. */
  async hasProviders(accountId: number, ids: number[]): Promise<boolean> {
    if (ids.length === 0) return true;
    const rows = await this.db
      .selectFrom("identity_providers")
      .select("id")
      .where("account_id", "=", accountId)
      .where("id", "in", ids)
      .execute();
    return rows.length === ids.length;
  }

  /** The group's name (FreeRADIUS knows groups by name), if the account has it. */
  async groupName(accountId: number, groupId: number): Promise<string | undefined> {
    const row = await this.db
      .selectFrom("groups")
      .select("name")
      .where("account_id", "=", accountId)
      .where("id", "=", groupId)
      .executeTakeFirst();
    return row?.name;
  }

  /** A sign-in handed to the gateway; the account's expired ones are swept at the same time. */
  async addPendingLogin(row: Insertable<PortalLoginsTable>, now: number): Promise<void> {
    await this.db
      .deleteFrom("portal_logins")
      .where("account_id", "=", row.account_id)
      .where("expires", "<", now)
      .execute();
    await this.db.insertInto("portal_logins").values(row).execute();
  }

  insert(row: Insertable<CaptivePortalsTable>): Promise<PortalRow> {
    return this.db.insertInto("captive_portals").values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(accountId: number, id: number, changes: PortalChanges): Promise<PortalRow | undefined> {
    return this.db
      .updateTable("captive_portals")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  async delete(accountId: number, id: number): Promise<boolean> {
    const result = await this.db
      .deleteFrom("captive_portals")
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** The logo's type, digest and size, without its bytes. */
  findLogoMeta(portalId: number): Promise<LogoMeta | undefined> {
    return this.db
      .selectFrom("portal_logos")
      .select(["portal_id", "account_id", "content_type", "sha256", "width", "height", "updated"])
      .where("portal_id", "=", portalId)
      .executeTakeFirst();
  }

  findLogo(portalId: number): Promise<LogoRow | undefined> {
    return this.db
      .selectFrom("portal_logos")
      .selectAll()
      .where("portal_id", "=", portalId)
      .executeTakeFirst();
  }

  async putLogo(row: LogoRow): Promise<void> {
    await this.db.deleteFrom("portal_logos").where("portal_id", "=", row.portal_id).execute();
    await this.db.insertInto("portal_logos").values(row).execute();
  }

  async deleteLogo(accountId: number, portalId: number): Promise<boolean> {
    const result = await this.db
      .deleteFrom("portal_logos")
      .where("account_id", "=", accountId)
      .where("portal_id", "=", portalId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

// SQL for the four FreeRADIUS attribute tables. radcheck/radreply key rows by username,
// radgroupcheck/radgroupreply by groupname; otherwise the tables are alike, so one repository
// serves both kinds of owner.

import { type Generated, type Insertable, type Kysely, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { lockedInTransaction } from "../../db/locking.ts";
import type { Schema } from "../../db/schema.ts";
import { ordered, type SortPlan } from "../../db/sort.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { queueReauthorization, type ReauthorizationTarget } from "../sessions/reauthorize.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import type { AttributeSortField, AttributeTable, StoredItem } from "./rules.ts";

/** Whose rows: a user's (by username) or a group's (by groupname). */
export interface Owner {
  kind: "user" | "group";
  name: string;
}

export interface AttributeRow {
  id: number;
  table: AttributeTable;
  /** The username or groupname the row belongs to. */
  owner: string;
  attribute: string;
  op: string;
  value: string;
}

interface AnyAttributeTable {
  id: Generated<number>;
  account_id: number;
  username: string;
  groupname: string;
  attribute: string;
  op: string;
  value: string;
}

// The four tables differ only in their owner column. Kysely cannot pick a table by a runtime name
// across two shapes, so queries go through this wider view; ownerColumn keeps them honest.
type AttributeTables = Kysely<Record<AttributeTable, AnyAttributeTable>>;

/** Each table has its own id sequence: a row is its table and its id. */
const SORT: SortPlan<AttributeSortField> = {
  keys: {
    id: { column: "id" },
    attribute: { column: "attribute", text: true },
    // Table names sort check before reply, for users (radcheck, radreply) and groups alike.
    table: { column: "table_name" },
  },
  defaultOrder: [{ field: "table", descending: false }],
  unique: [{ column: "table_name" }, { column: "id" }],
};

function ownerColumn(kind: Owner["kind"]): "username" | "groupname" {
  return kind === "user" ? "username" : "groupname";
}

function kindOf(table: AttributeTable): Owner["kind"] {
  return table === "radcheck" || table === "radreply" ? "user" : "group";
}

export class AttributesRepo {
  private readonly tables: AttributeTables;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
    private readonly inTransaction = false,
  ) {
    this.tables = db as unknown as AttributeTables;
  }

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Runs fn with a repository bound to one transaction. */
  transaction<T>(fn: (repo: AttributesRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new AttributesRepo(trx, this.dialect, true)));
  }

  findUser(accountId: number, id: number): Promise<{ id: number; username: string } | undefined> {
    return lockedInTransaction(
      this.db
        .selectFrom("users")
        .select(["id", "username"])
        .where("account_id", "=", accountId)
        .where("id", "=", id),
      this.dialect,
      this.inTransaction,
    ).executeTakeFirst();
  }

  /** The user whose name a radcheck/radreply row carries (exactly, as FreeRADIUS matches it). */
  findUserByExactName(accountId: number, username: string): Promise<{ id: number } | undefined> {
    return this.db
      .selectFrom("users")
      .select("id")
      .where("account_id", "=", accountId)
      .where("username", "=", username)
      .executeTakeFirst();
  }

  findGroup(accountId: number, id: number): Promise<{ id: number; name: string } | undefined> {
    return lockedInTransaction(
      this.db
        .selectFrom("groups")
        .select(["id", "name"])
        .where("account_id", "=", accountId)
        .where("id", "=", id),
      this.dialect,
      this.inTransaction,
    ).executeTakeFirst();
  }

  /** The owner's rows of the given tables, as one list: by table, then id, unless `sort` says otherwise. */
  async list(
    accountId: number,
    owner: Owner,
    tables: readonly AttributeTable[],
    page: PageRequest,
    sort?: Sort<AttributeSortField>,
  ): Promise<{ rows: AttributeRow[]; total: number }> {
    const column = ownerColumn(owner.kind);
    const [first, ...others] = tables.map((table) =>
      this.tables
        .selectFrom(table)
        .select([sql.lit(table).as("table_name"), "id", "attribute", "op", "value", column])
        .where("account_id", "=", accountId)
        .where(column, "=", owner.name),
    );
    if (!first) return { rows: [], total: 0 };
    const rows = this.tables.selectFrom(others.reduce((union, q) => union.unionAll(q), first).as("rows"));
    const [found, count] = await Promise.all([
      ordered(rows.selectAll(), this.dialect, SORT, sort).limit(page.limit).offset(offsetOf(page)).execute(),
      rows.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return {
      rows: found.map((row) => this.toRow(row.table_name as AttributeTable, row)),
      total: Number(count.total),
    };
  }

  async find(accountId: number, table: AttributeTable, id: number): Promise<AttributeRow | undefined> {
    const row = await this.tables
      .selectFrom(table)
      .select(["id", "attribute", "op", "value", ownerColumn(kindOf(table))])
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row && this.toRow(table, row);
  }

  /** Whether the owner already has this very row (names compared as FreeRADIUS does, ignoring case). */
  async hasSame(accountId: number, table: AttributeTable, owner: Owner, item: StoredItem): Promise<boolean> {
    const row = await this.tables
      .selectFrom(table)
      .select("id")
      .where("account_id", "=", accountId)
      .where(ownerColumn(owner.kind), "=", owner.name)
      .where((eb) => eb(eb.fn("lower", ["attribute"]), "=", item.attribute.toLowerCase()))
      .where("op", "=", item.op)
      .where("value", "=", item.value)
      .executeTakeFirst();
    return row !== undefined;
  }

  async insert(
    accountId: number,
    table: AttributeTable,
    owner: Owner,
    item: StoredItem,
  ): Promise<AttributeRow> {
    const column = ownerColumn(owner.kind);
    const row = await this.tables
      .insertInto(table)
      .values({ account_id: accountId, [column]: owner.name, ...item } as Insertable<AnyAttributeTable>)
      .returning(["id", "attribute", "op", "value", column])
      .executeTakeFirstOrThrow();
    return this.toRow(table, row);
  }

  async delete(accountId: number, table: AttributeTable, id: number): Promise<void> {
    await this.tables.deleteFrom(table).where("account_id", "=", accountId).where("id", "=", id).execute();
  }

  private toRow(
    table: AttributeTable,
    row: { id: number; attribute: string; op: string; value: string; username?: string; groupname?: string },
  ): AttributeRow {
    return {
      id: row.id,
      table,
      owner: row.username ?? row.groupname ?? "",
      attribute: row.attribute,
      // PostgreSQL pads the char(2) op column: "=" reads back as "= ".
      op: row.op.trimEnd(),
      value: row.value,
    };
  }

  /** Queues CoA-Requests of what a login gets now to the target's open sessions (with the change). */
  pushToSessions(accountId: number, target: ReauthorizationTarget, reason: string): Promise<void> {
    return queueReauthorization(this.db, this.dialect, accountId, target, reason);
  }
}

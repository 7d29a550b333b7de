// The SQL of directories (migration 036): the sources, their group mapping, and the shadow users
// they keep in users (directory_id, directory_dn, directory_seen) with their mapped groups.

import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { DirectoriesTable, Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { insertEvents, type NewEvent } from "../events/repo.ts";
import { groupIdsByName } from "../groups/repo.ts";
import { queueDisconnect } from "../sessions/jobs.ts";
import type { DirectoryUser } from "./shadows.ts";

export type DirectoryRow = Selectable<DirectoriesTable>;
export type DirectoryChanges = Omit<Updateable<DirectoriesTable>, "id" | "account_id" | "created">;

export interface MappingRow {
  directory_group: string;
  group_name: string;
}

export interface ShadowRow {
  id: number;
  username: string;
  email: string;
  fullname: string;
  status: string;
  directory_id: number | null;
  directory_dn: string | null;
}

export class DirectoriesRepo {
  constructor(
    readonly db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** This repository on a transaction; `run` commits when it resolves. */
  transaction<T>(run: (repo: DirectoriesRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => run(new DirectoriesRepo(trx, this.dialect)));
  }

  list(accountId: number): Promise<DirectoryRow[]> {
    return this.db
      .selectFrom("directories")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("id")
      .execute();
  }

  /** Every enabled directory of every account (the scheduled sync looks for due ones). */
  listEnabled(): Promise<DirectoryRow[]> {
    return this.db.selectFrom("directories").selectAll().where("enabled", "=", 1).orderBy("id").execute();
  }

  findById(accountId: number, id: number): Promise<DirectoryRow | undefined> {
    return this.db
      .selectFrom("directories")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  findByName(accountId: number, name: string): Promise<DirectoryRow | undefined> {
    return this.db
      .selectFrom("directories")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("name", "=", name)
      .executeTakeFirst();
  }

  insert(row: Insertable<DirectoriesTable>): Promise<DirectoryRow> {
    return this.db.insertInto("directories").values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(accountId: number, id: number, changes: DirectoryChanges): Promise<DirectoryRow | undefined> {
    return this.db
      .updateTable("directories")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  /** Deletes the directory and its mapping; its shadow users stay, as local users without a password. */
  async delete(accountId: number, id: number): Promise<void> {
    await this.db
      .deleteFrom("directory_groups")
      .where("account_id", "=", accountId)
      .where("directory_id", "=", id)
      .execute();
    await this.db
      .updateTable("users")
      .set({ directory_id: null, directory_dn: null, directory_seen: null })
      .where("account_id", "=", accountId)
      .where("directory_id", "=", id)
      .execute();
    await this.db
      .deleteFrom("directories")
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }

  mappings(accountId: number, directoryId: number): Promise<MappingRow[]> {
    return this.db
      .selectFrom("directory_groups as m")
      .innerJoin("groups as g", (join) =>
        join.onRef("g.id", "=", "m.group_id").onRef("g.account_id", "=", "m.account_id"),
      )
      .select(["m.directory_group", "g.name as group_name"])
      .where("m.account_id", "=", accountId)
      .where("m.directory_id", "=", directoryId)
      .orderBy("m.directory_group")
      .execute();
  }

  async replaceMappings(
    accountId: number,
    directoryId: number,
    rows: { directory_group: string; group_id: number }[],
  ): Promise<void> {
    await this.db
      .deleteFrom("directory_groups")
      .where("account_id", "=", accountId)
      .where("directory_id", "=", directoryId)
      .execute();
    if (rows.length === 0) return;
    await this.db
      .insertInto("directory_groups")
      .values(rows.map((r) => ({ account_id: accountId, directory_id: directoryId, ...r })))
      .execute();
  }

  groupIdsByName(accountId: number, names: string[]): Promise<Map<string, number>> {
    return groupIdsByName(this.db, accountId, names);
  }

  /** Users by name, case-insensitively (a shadow's name is the directory's spelling). */
  async usersByName(accountId: number, usernames: string[]): Promise<ShadowRow[]> {
    if (usernames.length === 0) return [];
    const lower = usernames.map((u) => u.toLowerCase());
    const rows: ShadowRow[] = [];
    for (let i = 0; i < lower.length; i += 500) {
      rows.push(
        ...(await this.db
          .selectFrom("users")
          .select(["id", "username", "email", "fullname", "status", "directory_id", "directory_dn"])
          .where("account_id", "=", accountId)
          .where((eb) => eb(eb.fn("lower", ["username"]), "in", lower.slice(i, i + 500)))
          .execute()),
      );
    }
    return rows;
  }

  /** The groups among `managed` each of these users is in (the mapping decides those alone). */
  async managedMemberships(
    accountId: number,
    usernames: string[],
    managed: string[],
  ): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    if (usernames.length === 0 || managed.length === 0) return found;
    for (let i = 0; i < usernames.length; i += 500) {
      const rows = await this.db
        .selectFrom("radusergroup")
        .select(["username", "groupname"])
        .where("account_id", "=", accountId)
        .where("username", "in", usernames.slice(i, i + 500))
        .where("groupname", "in", managed)
        .execute();
      for (const r of rows) found.set(r.username, [...(found.get(r.username) ?? []), r.groupname]);
    }
    return found;
  }

  /** New shadows (a sync's page at once: one statement for the users, one for their groups). */
  async insertShadows(
    accountId: number,
    directoryId: number,
    users: readonly DirectoryUser[],
    run: number | null,
    now: string,
  ): Promise<{ user: DirectoryUser; id: number }[]> {
    if (users.length === 0) return [];
    const rows = await this.db
      .insertInto("users")
      .values(
        users.map((u) => ({
          account_id: accountId,
          username: u.username,
          email: u.email,
          fullname: u.fullname,
          status: "enabled",
          created: now,
          updated: now,
          directory_id: directoryId,
          directory_dn: u.dn,
          directory_seen: run,
        })),
      )
      .returning(["id", "username"])
      .execute();
    const ids = new Map(rows.map((r) => [r.username, r.id]));
    const memberships = users.flatMap((u) =>
      u.groups.map((groupname) => ({ account_id: accountId, groupname, username: u.username, priority: 1 })),
    );
    for (let i = 0; i < memberships.length; i += 500)
      await this.db
        .insertInto("radusergroup")
        .values(memberships.slice(i, i + 500))
        .execute();
    return users.map((user) => ({ user, id: ids.get(user.username)! }));
  }

  async markSeen(accountId: number, ids: number[], run: number): Promise<void> {
    for (let i = 0; i < ids.length; i += 500) {
      await this.db
        .updateTable("users")
        .set({ directory_seen: run })
        .where("account_id", "=", accountId)
        .where("id", "in", ids.slice(i, i + 500))
        .execute();
    }
  }

  /**
   * Disables the directory's enabled shadows that sync run `run` did not see (removed from the
   * directory, or out of its search), queues the disconnection of their sessions; their names.
   */
  async disableUnseen(accountId: number, directoryId: number, run: number, now: string): Promise<string[]> {
    const gone = await this.db
      .selectFrom("users")
      .select(["id", "username", "email", "fullname"])
      .where("account_id", "=", accountId)
      .where("directory_id", "=", directoryId)
      .where("status", "=", "enabled")
      .where((eb) => eb.or([eb("directory_seen", "is", null), eb("directory_seen", "<", run)]))
      .execute();
    if (gone.length === 0) return [];
    const events: NewEvent[] = [];
    for (let i = 0; i < gone.length; i += 500) {
      const slice = gone.slice(i, i + 500);
      await this.db
        .updateTable("users")
        .set({ status: "disabled", updated: now })
        .where("account_id", "=", accountId)
        .where(
          "id",
          "in",
          slice.map((u) => u.id),
        )
        .execute();
      await this.disconnect(
        accountId,
        slice.map((u) => u.username),
        "removed from the directory",
      );
    }
    for (const u of gone) {
      events.push({
        accountId,
        kind: "user.updated",
        data: { id: u.id, username: u.username, status: "disabled" },
      });
    }
    await insertEvents(this.db, events);
    return gone.map((u) => u.username);
  }

  disconnect(accountId: number, usernames: string[], reason: string): Promise<void> {
    return queueDisconnect(this.db, this.dialect, accountId, { usernames, reason });
  }

  /** The sync's report, and its one audit row (the shadow users it wrote are not audited one by one). */
  async recordSync(accountId: number, id: number, at: number, report: string): Promise<void> {
    await this.transaction(async (repo) => {
      await repo.db
        .updateTable("directories")
        .set({ last_sync_at: at, last_sync: report })
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .execute();
      await repo.audit({ accountId, resource: "directory", id, action: "sync", after: JSON.parse(report) });
    });
  }
}

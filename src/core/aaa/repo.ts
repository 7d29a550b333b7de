// What a login decision reads: the user's rows in FreeRADIUS's tables, and session counts from
// radacct, always within one account.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import type { GroupItems, SqlUserItems } from "./authorize.ts";
import type { SessionCounters } from "./decide.ts";
import type { Pair } from "./pairs.ts";

export class LoginRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {}

  /** The Wisp user behind a username (exact match, as FreeRADIUS's queries): id and status. */
  findUser(accountId: number, username: string): Promise<{ id: number; status: string } | undefined> {
    return this.db
      .selectFrom("users")
      .select(["id", "status"])
      .where("account_id", "=", accountId)
      .where("username", "=", username)
      .executeTakeFirst();
  }

  /** The rows rlm_sql's authorize queries would read for this username (exact match, by id). */
  async userItems(accountId: number, username: string): Promise<SqlUserItems> {
    const rows = (table: "radcheck" | "radreply") =>
      this.db
        .selectFrom(table)
        .select(["attribute", "op", "value"])
        .where("account_id", "=", accountId)
        .where("username", "=", username)
        .orderBy("id")
        .execute();
    const [check, reply, memberships] = await Promise.all([
      rows("radcheck"),
      rows("radreply"),
      this.db
        .selectFrom("radusergroup")
        .select("groupname")
        .where("account_id", "=", accountId)
        .where("username", "=", username)
        .orderBy("priority")
        .orderBy("id")
        .execute(),
    ]);
    const groups: GroupItems[] = memberships.map((m) => ({ name: m.groupname, check: [], reply: [] }));
    if (groups.length > 0) {
      const names = [...new Set(groups.map((g) => g.name))];
      const groupRows = (table: "radgroupcheck" | "radgroupreply") =>
        this.db
          .selectFrom(table)
          .select(["groupname", "attribute", "op", "value"])
          .where("account_id", "=", accountId)
          .where("groupname", "in", names)
          .orderBy("id")
          .execute();
      const [groupCheck, groupReply] = await Promise.all([
        groupRows("radgroupcheck"),
        groupRows("radgroupreply"),
      ]);
      for (const group of groups) {
        group.check = groupCheck.filter((r) => r.groupname === group.name).map(toPair);
        group.reply = groupReply.filter((r) => r.groupname === group.name).map(toPair);
      }
    }
    return { check: check.map(toPair), reply: reply.map(toPair), groups };
  }

  counters(accountId: number, username: string): SessionCounters {
    const sessions = () =>
      this.db.selectFrom("radacct").where("account_id", "=", accountId).where("username", "=", username);
    const epoch =
      this.dialect === "postgres"
        ? sql<number>`extract(epoch from min(acctstarttime))`
        : sql<number>`min(acctstarttime)`;
    return {
      openSessions: async () => {
        // As FreeRADIUS's simul_count_query: sessions a NAS reboot closed do not count.
        const row = await sessions()
          .leftJoin("nasreload", "nasreload.nasipaddress", "radacct.nasipaddress")
          .where("radacct.acctstoptime", "is", null)
          .where((eb) =>
            eb.or([
              eb("nasreload.reloadtime", "is", null),
              eb("radacct.acctstarttime", ">", eb.ref("nasreload.reloadtime")),
            ]),
          )
          .select((eb) => eb.fn.countAll<number>().as("open"))
          .executeTakeFirstOrThrow();
        return Number(row.open);
      },
      totalSessionTime: async () => {
        const row = await sessions()
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("acctsessiontime"), sql<number>`0`).as("total"))
          .executeTakeFirstOrThrow();
        return Number(row.total);
      },
      firstSessionStart: async () => {
        const row = await sessions().select(epoch.as("first")).executeTakeFirst();
        return row?.first === null || row?.first === undefined ? null : Math.floor(Number(row.first));
      },
    };
  }
}

function toPair(row: { attribute: string; op: string; value: string }): Pair {
  return { attribute: row.attribute, op: row.op.trim(), value: row.value };
}

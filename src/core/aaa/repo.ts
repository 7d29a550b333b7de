// What a login decision reads: the user's rows in FreeRADIUS's tables, and session counts from
// radacct, always within one account.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { prepared } from "../../db/prepared.ts";
import type { Schema } from "../../db/schema.ts";
import { type PlanLimits, planLimitsOf } from "../plans/rules.ts";
import type { GroupItems, SqlUserItems } from "./authorize.ts";
import type { SessionCounters } from "./decide.ts";
import type { Pair } from "./pairs.ts";
import type { Usage } from "./quotas.ts";

export class LoginRepo {
  // Every Access-Request runs these: built and compiled once (see db/prepared.ts).
  private readonly user;
  private readonly check;
  private readonly reply;
  private readonly memberships;
  private readonly groupCheck;
  private readonly groupReply;
  private readonly usageOf;
  private readonly planOf;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {
    const byUser = (table: "radcheck" | "radreply") => (accountId: number, username: string) =>
      db
        .selectFrom(table)
        .select(["attribute", "op", "value"])
        .where("account_id", "=", accountId)
        .where("username", "=", username)
        .orderBy("id");
    const byGroup = (table: "radgroupcheck" | "radgroupreply") => (accountId: number, groupname: string) =>
      db
        .selectFrom(table)
        .select(["attribute", "op", "value"])
        .where("account_id", "=", accountId)
        .where("groupname", "=", groupname)
        .orderBy("id");
    const sample = 2;
    this.user = prepared(
      db,
      (accountId: number, username: string) =>
        db
          .selectFrom("users")
          .select(["id", "status", "directory_id"])
          .where("account_id", "=", accountId)
          .where("username", "=", username),
      sample,
    );
    this.check = prepared(db, byUser("radcheck"), sample);
    this.reply = prepared(db, byUser("radreply"), sample);
    this.memberships = prepared(
      db,
      (accountId: number, username: string) =>
        db
          .selectFrom("radusergroup")
          .select("groupname")
          .where("account_id", "=", accountId)
          .where("username", "=", username)
          .orderBy("priority")
          .orderBy("id"),
      sample,
    );
    // The user's own plan, else the plan of its first group (radusergroup priority) that has one.
    this.planOf = prepared(
      db,
      (accountId: number, username: string) =>
        db
          .selectFrom("plans")
          .selectAll()
          .where("account_id", "=", accountId)
          .where("id", "=", (eb) =>
            eb.fn.coalesce(
              eb
                .selectFrom("users")
                .select("users.plan_id")
                .where("users.account_id", "=", accountId)
                .where("users.username", "=", username),
              eb
                .selectFrom("radusergroup")
                .innerJoin("groups", (join) =>
                  join
                    .onRef("groups.account_id", "=", "radusergroup.account_id")
                    .onRef("groups.name", "=", "radusergroup.groupname"),
                )
                .select("groups.plan_id")
                .where("radusergroup.account_id", "=", accountId)
                .where("radusergroup.username", "=", username)
                .where("groups.plan_id", "is not", null)
                .orderBy("radusergroup.priority")
                .orderBy("radusergroup.id")
                .limit(1),
            ),
          ),
      sample,
    );
    this.groupCheck = prepared(db, byGroup("radgroupcheck"), sample);
    this.groupReply = prepared(db, byGroup("radgroupreply"), sample);
    this.usageOf = prepared(
      db,
      (accountId: number, username: string, day: number, month: number) => {
        const pg = dialect === "postgres";
        const start = pg ? sql`extract(epoch from acctstarttime)` : sql`acctstarttime`;
        const greatest = sql.raw(pg ? "greatest" : "max");
        const time = sql`coalesce(acctsessiontime, 0)`;
        const octets = sql`coalesce(acctinputoctets, 0) + coalesce(acctoutputoctets, 0)`;
        // rlm_sqlcounter's dailycounter/monthlycounter sum: each session's part after the reset.
        const overlap = (since: unknown) =>
          sql<number>`coalesce(sum(case when ${start} + ${time} > ${since} then ${time} - ${greatest}(${since} - ${start}, 0) else 0 end), 0)`;
        const startedSince = (since: unknown) =>
          sql<number>`coalesce(sum(case when ${start} >= ${since} then ${octets} else 0 end), 0)`;
        return db
          .selectFrom("radacct")
          .where("account_id", "=", accountId)
          .where("username", "=", username)
          .select([
            overlap(day).as("day_time"),
            overlap(month).as("month_time"),
            sql<number>`coalesce(sum(${time}), 0)`.as("all_time"),
            startedSince(day).as("day_octets"),
            startedSince(month).as("month_octets"),
            sql<number>`coalesce(sum(${octets}), 0)`.as("all_octets"),
          ]);
      },
      4,
    );
  }

  /** Everything the quotas count, for one user, in one compiled-once query (the Interim-Update check). */
  async usage(accountId: number, username: string, day: number, month: number): Promise<Usage> {
    const row = (await this.usageOf(accountId, username, day, month))[0];
    const n = (v: unknown) => Math.max(0, Math.floor(Number(v ?? 0)));
    return {
      time: { day: n(row?.day_time), month: n(row?.month_time), all: n(row?.all_time) },
      octets: { day: n(row?.day_octets), month: n(row?.month_octets), all: n(row?.all_octets) },
    };
  }

  /** The Wisp user behind a username (exact match, as FreeRADIUS's queries): id, status, its directory. */
  async findUser(
    accountId: number,
    username: string,
  ): Promise<{ id: number; status: string; directory_id: number | null } | undefined> {
    return (await this.user(accountId, username))[0];
  }

  /** The rows rlm_sql's authorize queries would read for this username (exact match, by id). */
  async userItems(accountId: number, username: string): Promise<SqlUserItems> {
    const [check, reply, memberships, plan] = await Promise.all([
      this.check(accountId, username),
      this.reply(accountId, username),
      this.memberships(accountId, username),
      this.plan(accountId, username),
    ]);
    const groups: GroupItems[] = await Promise.all(
      memberships.map(async ({ groupname }) => {
        const [groupCheck, groupReply] = await Promise.all([
          this.groupCheck(accountId, groupname),
          this.groupReply(accountId, groupname),
        ]);
        return { name: groupname, check: groupCheck.map(toPair), reply: groupReply.map(toPair) };
      }),
    );
    return { check: check.map(toPair), reply: reply.map(toPair), groups, plan };
  }

  /** The user's plan: its own, else its first group's (by radusergroup priority) with one. */
  async plan(accountId: number, username: string): Promise<PlanLimits | null> {
    const row = (await this.planOf(accountId, username))[0];
    return row ? planLimitsOf(row) : null;
  }

  /** One group's check and reply items (a device's group, evaluated before its owner's groups). */
  async groupItems(accountId: number, groupname: string): Promise<{ check: Pair[]; reply: Pair[] }> {
    const [check, reply] = await Promise.all([
      this.groupCheck(accountId, groupname),
      this.groupReply(accountId, groupname),
    ]);
    return { check: check.map(toPair), reply: reply.map(toPair) };
  }

  octetsSince(accountId: number, usernames: string[], since: number): Promise<number> {
    return sumOctets(this.db, this.dialect, accountId, usernames, since);
  }

  counters(accountId: number, username: string): SessionCounters {
    return sessionCounters(this.db, this.dialect, accountId, [username]);
  }
}

/**
 * The session counters of a login over the sessions of these usernames (a voucher's code may be
 * typed in either case), on `db`: the caller's transaction where it holds one.
 */
export function sessionCounters(
  db: Kysely<Schema>,
  dialect: DialectName,
  accountId: number,
  usernames: string[],
): SessionCounters {
  const sessions = () =>
    db.selectFrom("radacct").where("account_id", "=", accountId).where("username", "in", usernames);
  const epoch =
    dialect === "postgres"
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
    sessionTimeSince: async (since) => {
      // rlm_sqlcounter's dailycounter query: the part of each session after `since`.
      const start =
        dialect === "postgres" ? sql<number>`extract(epoch from acctstarttime)` : sql<number>`acctstarttime`;
      const greatest = dialect === "postgres" ? sql.raw("greatest") : sql.raw("max");
      const row = await sessions()
        .where(sql<boolean>`${start} + acctsessiontime > ${since}`)
        .select(
          sql<number>`coalesce(sum(acctsessiontime - ${greatest}(${since} - ${start}, 0)), 0)`.as("total"),
        )
        .executeTakeFirstOrThrow();
      return Math.max(0, Math.floor(Number(row.total)));
    },
    octetsSince: (since) => sumOctets(db, dialect, accountId, usernames, since),
    firstSessionStart: async () => {
      const row = await sessions().select(epoch.as("first")).executeTakeFirst();
      return row?.first === null || row?.first === undefined ? null : Math.floor(Number(row.first));
    },
  };
}

/** Octets in plus out of the sessions of these usernames that started at or after `since`. */
export async function sumOctets(
  db: Kysely<Schema>,
  dialect: DialectName,
  accountId: number,
  usernames: string[],
  since: number,
): Promise<number> {
  let query = db.selectFrom("radacct").where("account_id", "=", accountId).where("username", "in", usernames);
  if (since > 0) {
    query = query.where("acctstarttime", ">=", dialect === "postgres" ? new Date(since * 1000) : since);
  }
  const row = await query
    .select(
      sql<number>`coalesce(sum(coalesce(acctinputoctets, 0) + coalesce(acctoutputoctets, 0)), 0)`.as("total"),
    )
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

function toPair(row: { attribute: string; op: string; value: string }): Pair {
  return { attribute: row.attribute, op: row.op.trim(), value: row.value };
}

// The sessions area on one database, with the quota check on the accounting path: after each
// Start or Interim-Update is stored, the user's (or voucher's) quotas are compared with what the
// sessions used, and a session over a quota gets a disconnect queued (durable, sent by the worker).
import type { Kysely } from "kysely";
import type { Database, DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { authorize } from "../aaa/authorize.ts";
import { wireReply } from "../aaa/decide.ts";
import type { Pair } from "../aaa/pairs.ts";
import { exhaustedQuota, hasQuota, periodStart } from "../aaa/quotas.ts";
import { LoginRepo, sumOctets } from "../aaa/repo.ts";
import type { AaaService } from "../aaa/service.ts";
import { SessionsRepo } from "./repo.ts";
import { SessionsService } from "./service.ts";

export type { SessionsService };

/** How long a user's quota items are trusted on the accounting path (they change rarely). */
const LIMITS_TTL_MS = 10_000;

interface Limits {
  /** The user's control items when they hold a quota; null: none to watch. */
  control: Pair[] | null;
  /** A voucher's data_limit (its code as username), or null. */
  voucherDataLimit: number | null;
  expires: number;
}

export class QuotaWatch {
  private readonly logins: LoginRepo;
  private readonly limits = new Map<string, Limits>();

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
    private readonly sessions: SessionsService,
    private readonly repo: SessionsRepo,
  ) {
    this.logins = new LoginRepo(db, dialect);
  }

  private async limitsOf(accountId: number, username: string): Promise<Limits> {
    const key = `${accountId}\0${username}`;
    const cached = this.limits.get(key);
    if (cached && cached.expires > Date.now()) return cached;
    if (this.limits.size > 100_000) this.limits.clear();
    const authz = authorize(
      [{ attribute: "User-Name", op: "=", value: username }],
      await this.logins.userItems(accountId, username),
    );
    let voucherDataLimit: number | null = null;
    if (!authz.found && /^[A-Za-z0-9]{1,16}$/.test(username)) {
      const row = await this.db
        .selectFrom("vouchers")
        .select("data_limit")
        .where("account_id", "=", accountId)
        .where("code", "=", username.toUpperCase())
        .executeTakeFirst();
      voucherDataLimit =
        row?.data_limit === null || row?.data_limit === undefined ? null : Number(row.data_limit);
    }
    const limits: Limits = {
      control: authz.found && hasQuota(authz.control) ? authz.control : null,
      voucherDataLimit,
      expires: Date.now() + LIMITS_TTL_MS,
    };
    this.limits.set(key, limits);
    return limits;
  }

  /** Whether the session's user is over a quota now; queues its disconnect if so. */
  async check(accountId: number, username: string, sessionId: number): Promise<string | null> {
    const limits = await this.limitsOf(accountId, username);
    if (!limits.control && limits.voucherDataLimit === null) return null;
    const now = Math.floor(Date.now() / 1000);
    let reason: string | null = null;
    if (limits.control) {
      const usage = await this.logins.usage(
        accountId,
        username,
        periodStart("day", now),
        periodStart("month", now),
      );
      reason = exhaustedQuota(limits.control, usage);
    } else if (limits.voucherDataLimit !== null) {
      const spellings = [...new Set([username, username.toUpperCase(), username.toLowerCase()])];
      const used = await sumOctets(this.db, this.dialect, accountId, spellings, 0);
      if (used >= limits.voucherDataLimit) reason = "quota exhausted: voucher data";
    }
    if (reason === null) return null;
    const row = await this.repo.get(accountId, sessionId);
    if (row && row.acctstoptime === null) await this.sessions.queueDisconnect(accountId, row, reason);
    return reason;
  }
}

export function createSessions(database: Database, aaa: AaaService): SessionsService {
  const repo = new SessionsRepo(database.db, database.dialect);
  const sessions = new SessionsService(repo);
  const watch = new QuotaWatch(database.db, database.dialect, sessions, repo);
  const logins = new LoginRepo(database.db, database.dialect);
  // rlm_sql's authorize over the user's and groups' rows, with the session's request facts for
  // their check items. Policies and plans (issue 25) plug in here.
  sessions.replyOf = async (facts) => {
    const request: Pair[] = [{ attribute: "User-Name", op: "=", value: facts.username }];
    const add = (attribute: string, value: string | null) => {
      if (value) request.push({ attribute, op: "=", value });
    };
    add("Called-Station-Id", facts.calledStationId);
    add("NAS-Identifier", facts.nasIdentifier);
    add("Calling-Station-Id", facts.callingStationId);
    const authz = authorize(request, await logins.userItems(facts.accountId, facts.username));
    return authz.found ? wireReply(authz.reply) : [];
  };
  aaa.onUsage = ({ accountId, username, sessionId }) => {
    // After the Accounting-Response: a slow check never holds up the NAS.
    watch
      .check(accountId, username, sessionId)
      .catch((error) => sessions.log?.warn({ err: error, session: sessionId }, "quota check failed"));
  };
  return sessions;
}

// The sessions area on one database, with the quota check on the accounting path: after each
// Start or Interim-Update is stored, the user's (or voucher's) quotas are compared with what the
// sessions used, and a session over a quota gets a disconnect queued (durable, sent by the worker).

import type { Kysely } from "kysely";
import type { Database, DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { authorize } from "../aaa/authorize.ts";
import type { Pair } from "../aaa/pairs.ts";
import { exhaustedQuota, hasQuota, periodStart } from "../aaa/quotas.ts";
import type { AuthMethod } from "../aaa/recording.ts";
import { LoginRepo, sumOctets } from "../aaa/repo.ts";
import type { AaaService } from "../aaa/service.ts";
import { planControl } from "../plans/attributes.ts";
import { VoucherLoginRepo } from "../vouchers/login-repo.ts";
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
  private readonly vouchers: VoucherLoginRepo;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
    private readonly sessions: SessionsService,
    private readonly repo: SessionsRepo,
  ) {
    this.logins = new LoginRepo(db, dialect);
    this.vouchers = new VoucherLoginRepo(dialect);
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
    let control = authz.found ? authz.control : null;
    if (!authz.found && /^[A-Za-z0-9]{1,16}$/.test(username)) {
      const row = await this.db
        .selectFrom("vouchers")
        .select(["data_limit", "batch_id"])
        .where("account_id", "=", accountId)
        .where("code", "=", username.toUpperCase())
        .executeTakeFirst();
      voucherDataLimit =
        row?.data_limit === null || row?.data_limit === undefined ? null : Number(row.data_limit);
      // A voucher batch's plan: its quotas, as for a user (vouchers/login.ts).
      const plan = row ? await this.vouchers.batchPlan(this.db, accountId, row.batch_id) : null;
      if (plan) control = planControl(plan);
    }
    const limits: Limits = {
      control: control && hasQuota(control) ? control : null,
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
      // A user's quotas, or a voucher's plan quotas (its data_limit is then checked too, below).
      const usage = await this.logins.usage(
        accountId,
        username,
        periodStart("day", now),
        periodStart("month", now),
      );
      reason = exhaustedQuota(limits.control, usage);
    }
    if (reason === null && limits.voucherDataLimit !== null) {
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
  // What a login with the session's facts would get now: the same rules as the login itself
  // (items, plan in the network's vendor, policies), see AaaService.replyFor.
  sessions.replyOf = async (facts) => {
    const network = await repo.network(facts.accountId, facts.networkId);
    if (!network) return [];
    const request: Pair[] = [{ attribute: "User-Name", op: "=", value: facts.username }];
    const add = (attribute: string, value: string | null) => {
      if (value) request.push({ attribute, op: "=", value });
    };
    add("Called-Station-Id", facts.calledStationId);
    add("NAS-Identifier", facts.nasIdentifier);
    add("Calling-Station-Id", facts.callingStationId);
    return aaa.replyFor(network, request, facts.authMethod as AuthMethod | null);
  };
  aaa.onUsage = ({ accountId, username, sessionId }) => {
    // After the Accounting-Response: a slow check never holds up the NAS.
    watch
      .check(accountId, username, sessionId)
      .catch((error) => sessions.log?.warn({ err: error, session: sessionId }, "quota check failed"));
  };
  return sessions;
}
